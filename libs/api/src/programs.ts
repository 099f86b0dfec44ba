import { z } from 'zod';
import { EARNINGS_MAX, EnrollmentFormItemType, IntegratorProgramFields, ProgramFields, RatesType } from '@efs/contracts';
import { DeviceType, Pagination, repeatable } from './common.ts';
import { createShape, namedRecord, recordShape, updateShape } from './fields.ts';
import { ZipCode } from './sites.ts';

export const EnrollmentFormItem = namedRecord(EnrollmentFormItemType);

/** Rates, in whole currency units, from which a site's earnings are estimated. */
export const Rates = namedRecord(RatesType);

const Earnings = z.number().int().min(0).max(EARNINGS_MAX);

/**
 * A program as every endpoint answers it to integrators: all 15 fields, always present. Instead
 * of its coverage and rates, the earnings estimated for the site's devices.
 */
export const Program = z
  .object({
    ...recordShape(IntegratorProgramFields),
    earnings_for_site_upfront: Earnings.describe('Estimated one-time upfront earnings, based on the site information.'),
    earnings_for_site_yearly: Earnings.describe('Estimated yearly recurring earnings, based on the site information.'),
  })
  .meta({ id: 'Program' });
export type ProgramType = z.infer<typeof Program>;

/** `GET /v1/programs` (client token): the catalog, optionally filtered. */
export const ProgramListQuery = Pagination.extend({
  device_type: DeviceType.optional(),
  zip_code: ZipCode.optional(),
});
export type ProgramListQueryType = z.infer<typeof ProgramListQuery>;

/** One device type or several (repeatable `device_type`), always read as a list. */
const DeviceTypes = repeatable(DeviceType, 10);

/**
 * `GET /v1/site/{siteId}/programs` (site token): `zip_code` defaults to the site's zip code and
 * `device_type` (repeatable) to the types of the site's devices.
 */
export const SiteProgramsQuery = Pagination.extend({
  zip_code: ZipCode.optional(),
  device_type: DeviceTypes.optional(),
});
export type SiteProgramsQueryType = z.infer<typeof SiteProgramsQuery>;

export const SiteProgramParams = z.object({ siteId: z.string().min(1).max(255), programId: z.uuid() });

/**
 * Internal operation eligiblePrograms (commissioning asks the catalog): the programs covering the zip
 * code that accept at least one of the devices, with earnings estimated from those devices.
 */
export const EligibleProgramsRequest = z.object({
  zip_code: ZipCode.nullable(),
  devices: z.array(z.object({ type: DeviceType, attributes: z.record(z.string(), z.number()) })),
});
export type EligibleProgramsRequestType = z.infer<typeof EligibleProgramsRequest>;

/** `POST {utility_base_url}/v1/programs`: the terms a utility sets; the terms version is issued by the service. */
export const UtilityProgramCreate = z.object(createShape(ProgramFields)).meta({ id: 'UtilityProgramCreate' });
export type UtilityProgramCreateType = z.infer<typeof UtilityProgramCreate>;

/** `PATCH {utility_base_url}/v1/programs/{id}`: any subset of the program's terms, and of its rates. */
export const UtilityProgramUpdate = z.strictObject({ ...updateShape(ProgramFields), rates: Rates.partial().optional() }).meta({ id: 'UtilityProgramUpdate' });
export type UtilityProgramUpdateType = z.infer<typeof UtilityProgramUpdate>;

/** A program as its utility sees it: terms, coverage and rates (earnings are per site, so absent). */
export const UtilityProgram = z.object(recordShape(ProgramFields)).meta({ id: 'UtilityProgram' });
export type UtilityProgramType = z.infer<typeof UtilityProgram>;

export const UtilityProgramListQuery = Pagination;
export const UtilityProgramParams = z.object({ id: z.uuid() });
