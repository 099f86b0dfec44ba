import { z } from 'zod';
import { DateTime, Pagination } from './common.ts';

/** Two-character US state and territory codes the specification allows (no DC). */
export const StateCode = z
  .enum([
    'AK', 'AL', 'AR', 'AZ', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'IA', 'ID', 'IL', 'IN', 'KS', 'KY', 'LA', 'MA', 'MD', 'ME', 'MI',
    'MN', 'MO', 'MS', 'MT', 'NC', 'ND', 'NE', 'NH', 'NJ', 'NM', 'NV', 'NY', 'OH', 'OK', 'OR', 'PA', 'PR', 'RI', 'SC', 'SD', 'TN', 'TX',
    'UT', 'VA', 'VT', 'WA', 'WI', 'WV', 'WY',
  ])
  .meta({ id: 'StateCode' });
export type StateCodeType = z.infer<typeof StateCode>;

/** The integrator's own identifier of a site or device (unique per integrator). */
export const ExternalId = z.string().min(1).max(255);

const text = () => z.string().max(255).nullable().optional();

/** Every Site field except `id`: all optional at commissioning, filled in later by the end user. */
export const SiteFields = {
  first_name: text(),
  last_name: text(),
  company_name: text().describe('Only when the customer is a company.'),
  email: z.email().max(320).nullable().optional(),
  state_code: StateCode.nullable().optional(),
  city: text(),
  zip_code: z.string().max(10).nullable().optional(),
  street_address: text(),
  street_address2: text(),
  service_account_id: text().meta({ deprecated: true, description: "Deprecated. The customer's utility account ID." }),
};

/** The Site of commissioning (input): the specification's 11 fields, only `id` required. */
export const Site = z.object({ id: ExternalId.describe("The site's identifier in the caller's own system."), ...SiteFields }).meta({ id: 'Site' });
export type SiteType = z.infer<typeof Site>;

/** The site as read by the end user: every commissioning field (null when unknown) plus timestamps. */
export const SiteRecord = z
  .object({
    id: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    company_name: z.string().nullable(),
    email: z.string().nullable(),
    state_code: StateCode.nullable(),
    city: z.string().nullable(),
    zip_code: z.string().nullable(),
    street_address: z.string().nullable(),
    street_address2: z.string().nullable(),
    service_account_id: z.string().nullable(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'SiteRecord' });
export type SiteRecordType = z.infer<typeof SiteRecord>;

/** `PATCH /v1/site/{siteId}`: any subset of the Site fields except `id` (which cannot change). */
export const SiteUpdate = z.strictObject(SiteFields).meta({ id: 'SiteUpdate' });
export type SiteUpdateType = z.infer<typeof SiteUpdate>;

export const SiteParams = z.object({ siteId: ExternalId });
export type SiteParamsType = z.infer<typeof SiteParams>;

/** `GET /v1/sites` (client token). */
export const SiteListQuery = Pagination;
export type SiteListQueryType = z.infer<typeof SiteListQuery>;
