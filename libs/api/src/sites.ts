import { z } from 'zod';
import { SiteFields, StateCodes, externalId, zipCode } from '@efs/contracts';
import { Pagination } from './common.ts';
import { createShape, namedEnum, recordShape, updateShape, zodOf } from './fields.ts';

export const StateCode = namedEnum(StateCodes);
export type StateCodeType = z.infer<typeof StateCode>;

/** The integrator's own identifier of a site or device (unique per integrator). */
export const ExternalId = zodOf(externalId);

/** A US ZIP code: five digits, or ZIP+4 (`88801-1234`), which matches programs by its first five digits. */
export const ZipCode = zodOf(zipCode);

/** The Site of commissioning (input): the specification's 11 fields, only `id` required. */
export const Site = z.object(createShape(SiteFields)).meta({ id: 'Site' });
export type SiteType = z.infer<typeof Site>;

/** The site as read by the end user: every commissioning field (null when unknown) plus timestamps. */
export const SiteRecord = z.object(recordShape(SiteFields)).meta({ id: 'SiteRecord' });
export type SiteRecordType = z.infer<typeof SiteRecord>;

/** `PATCH /v1/site/{siteId}`: any subset of the Site fields except `id` (which cannot change). */
export const SiteUpdate = z.strictObject(updateShape(SiteFields)).meta({ id: 'SiteUpdate' });
export type SiteUpdateType = z.infer<typeof SiteUpdate>;

export const SiteParams = z.object({ siteId: ExternalId });
export type SiteParamsType = z.infer<typeof SiteParams>;

/** `GET /v1/sites` (client token). */
export const SiteListQuery = Pagination;
export type SiteListQueryType = z.infer<typeof SiteListQuery>;
