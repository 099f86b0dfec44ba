import { z } from 'zod';
import { DateTime, DeviceType, Pagination } from './common.ts';

export const EnrollmentFormItem = z
  .object({
    name: z.string(),
    label: z.string(),
    type: z.enum(['string', 'number', 'boolean']),
    hint: z.string(),
  })
  .meta({ id: 'EnrollmentFormItem' });

/** A program as every endpoint answers it: all 15 fields, always present. */
export const Program = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    eligible_device_types: z.array(DeviceType),
    can_auto_enroll: z.boolean(),
    minimum_reserve_percentage: z.number().int(),
    minimum_commitment_months: z.number().int().nullable(),
    participation_months: z.array(z.number().int().min(1).max(12)),
    earnings_for_site_upfront: z.number().int(),
    earnings_for_site_yearly: z.number().int(),
    created_at: DateTime,
    updated_at: DateTime,
    enrollment_form: z.array(EnrollmentFormItem),
    terms_and_conditions_version: z.string().nullable(),
    terms_and_conditions_text: z.string().nullable(),
  })
  .meta({ id: 'Program' });
export type ProgramType = z.infer<typeof Program>;

/** `GET /v1/programs` (client token): the catalog, optionally filtered. */
export const ProgramListQuery = Pagination.extend({
  device_type: DeviceType.optional(),
  zip_code: z.string().min(1).max(10).optional(),
});
export type ProgramListQueryType = z.infer<typeof ProgramListQuery>;

/** One device type or several (repeatable `device_type`), always read as a list. */
const DeviceTypes = z.union([DeviceType, z.array(DeviceType)]).transform((v) => (Array.isArray(v) ? v : [v]));

/**
 * `GET /v1/site/{siteId}/programs` (site token): `zip_code` defaults to the site's zip code and
 * `device_type` (repeatable) to the types of the site's devices.
 */
export const SiteProgramsQuery = Pagination.extend({
  zip_code: z.string().min(1).max(10).optional(),
  device_type: DeviceTypes.optional(),
});
export type SiteProgramsQueryType = z.infer<typeof SiteProgramsQuery>;

export const SiteProgramParams = z.object({ siteId: z.string().min(1).max(255), programId: z.uuid() });

/**
 * Internal op `programs.eligible` (commissioning asks the catalog): the programs covering the zip
 * code that accept at least one of the devices, with earnings estimated from those devices.
 */
export const EligibleProgramsRequest = z.object({
  zip_code: z.string().nullable(),
  devices: z.array(z.object({ type: DeviceType, attributes: z.record(z.string(), z.number()) })),
});
export type EligibleProgramsRequestType = z.infer<typeof EligibleProgramsRequest>;

/** Rates, in whole currency units, from which a site's earnings are estimated. */
export const Rates = z
  .object({
    upfront_per_kwh: z.number().int().min(0).describe('one-time, per kWh of battery capacity'),
    upfront_per_device: z.number().int().min(0).describe('one-time, per eligible device'),
    yearly_per_kw: z.number().int().min(0).describe('per year, per kW of battery discharge or EV charging power'),
    yearly_per_device: z.number().int().min(0).describe('per year, per eligible device'),
  })
  .meta({ id: 'Rates' });

const ZipCode = z.string().regex(/^\d{5}$/, 'a five-digit zip code');
const Months = z
  .array(z.number().int().min(1).max(12))
  .min(1)
  .refine((a) => new Set(a).size === a.length, 'months must not repeat');

/** Fields a utility sets on its program; the terms version is issued by the service. */
const ProgramTerms = {
  name: z.string().min(1).max(255),
  description: z.string().max(10_000),
  eligible_device_types: z.array(DeviceType).min(1).refine((a) => new Set(a).size === a.length, 'device types must not repeat'),
  zip_codes: z.array(ZipCode).min(1).max(10_000).describe('Zip codes the program covers.'),
  can_auto_enroll: z.boolean(),
  minimum_reserve_percentage: z.number().int().min(0).max(100),
  minimum_commitment_months: z.number().int().min(0).max(120).nullable(),
  participation_months: Months,
  rates: Rates,
  enrollment_form: z.array(EnrollmentFormItem).max(50),
  terms_and_conditions_text: z.string().min(1).max(200_000).nullable().describe('Markdown; a change issues a new terms_and_conditions_version.'),
};

/** `POST {utility_base_url}/v1/programs`. */
export const UtilityProgramCreate = z
  .object({
    ...ProgramTerms,
    description: ProgramTerms.description.default(''),
    can_auto_enroll: ProgramTerms.can_auto_enroll.default(false),
    minimum_reserve_percentage: ProgramTerms.minimum_reserve_percentage.default(0),
    minimum_commitment_months: ProgramTerms.minimum_commitment_months.default(null),
    participation_months: Months.default([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    rates: Rates.default({ upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 }),
    enrollment_form: ProgramTerms.enrollment_form.default([]),
    terms_and_conditions_text: ProgramTerms.terms_and_conditions_text.default(null),
  })
  .meta({ id: 'UtilityProgramCreate' });
export type UtilityProgramCreateType = z.infer<typeof UtilityProgramCreate>;

/** `PATCH {utility_base_url}/v1/programs/{id}`: any subset of the program's fields. */
export const UtilityProgramUpdate = z.strictObject({ ...ProgramTerms, rates: Rates.partial() }).partial().meta({ id: 'UtilityProgramUpdate' });
export type UtilityProgramUpdateType = z.infer<typeof UtilityProgramUpdate>;

/** A program as its utility sees it: terms, coverage and rates (earnings are per site, so absent). */
export const UtilityProgram = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    eligible_device_types: z.array(DeviceType),
    zip_codes: z.array(z.string()),
    can_auto_enroll: z.boolean(),
    minimum_reserve_percentage: z.number().int(),
    minimum_commitment_months: z.number().int().nullable(),
    participation_months: z.array(z.number().int().min(1).max(12)),
    rates: Rates,
    enrollment_form: z.array(EnrollmentFormItem),
    terms_and_conditions_version: z.string().nullable(),
    terms_and_conditions_text: z.string().nullable(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'UtilityProgram' });
export type UtilityProgramType = z.infer<typeof UtilityProgram>;

export const UtilityProgramListQuery = Pagination;
export const UtilityProgramParams = z.object({ id: z.uuid() });
