import type { SiteMessage } from '@efs/contracts';
import type { SiteRecordType, SiteType, SiteUpdateType, StateCodeType } from '@efs/api';

/** The Site fields besides id, in the specification's order. */
export const SITE_FIELDS = [
  'first_name',
  'last_name',
  'company_name',
  'email',
  'state_code',
  'city',
  'zip_code',
  'street_address',
  'street_address2',
  'service_account_id',
] as const;
export type SiteField = (typeof SITE_FIELDS)[number];

/** A site as commissioning keeps it. */
export interface Site {
  integrator_id: string;
  id: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  email: string | null;
  state_code: StateCodeType | null;
  city: string | null;
  zip_code: string | null;
  street_address: string | null;
  street_address2: string | null;
  service_account_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A new site from the commissioning input; fields not given are unknown (null) until the end user fills them in. */
export function newSite(integratorId: string, input: SiteType, now: Date): Site {
  const site = { integrator_id: integratorId, id: input.id, created_at: now, updated_at: now } as Site;
  for (const f of SITE_FIELDS) (site as unknown as Record<SiteField, unknown>)[f] = input[f] ?? null;
  return site;
}

/** Applies a partial update; `changed` is false when every given value equals the stored one. */
export function applySiteUpdate(site: Site, patch: SiteUpdateType, now: Date): { site: Site; changed: boolean } {
  const next: Site = { ...site };
  let changed = false;
  for (const f of SITE_FIELDS) {
    if (!(f in patch) || patch[f] === undefined) continue;
    const v = patch[f] ?? null;
    if (v !== site[f]) {
      (next as unknown as Record<SiteField, unknown>)[f] = v;
      changed = true;
    }
  }
  if (changed) next.updated_at = now;
  return { site: next, changed };
}

export function toSiteRecord(s: Site): SiteRecordType {
  return {
    id: s.id,
    first_name: s.first_name,
    last_name: s.last_name,
    company_name: s.company_name,
    email: s.email,
    state_code: s.state_code,
    city: s.city,
    zip_code: s.zip_code,
    street_address: s.street_address,
    street_address2: s.street_address2,
    service_account_id: s.service_account_id,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

/** The site as announced on SitesTopic. */
export function toSiteMessage(s: Site): SiteMessage {
  const { created_at, updated_at, ...rest } = toSiteRecord(s);
  return { integrator_id: s.integrator_id, ...rest, created_at, updated_at, deleted: false };
}
