import { SiteFields, applyPatch, createKeys, fromInput, pick, toWire, updateKeys, visibleFields, type DomainOf, type SiteMessage } from '@efs/contracts';
import type { SiteRecordType, SiteType, SiteUpdateType } from '@efs/api';

/** A site as commissioning keeps it. */
export type Site = DomainOf<typeof SiteFields>;

/** What commissioning takes of a new site, and what the end user may change later. */
const SiteInput = pick(SiteFields, createKeys(SiteFields));
const SiteChanges = pick(SiteFields, updateKeys(SiteFields));

/** A new site from the commissioning input; fields not given are unknown (null) until the end user fills them in. */
export function newSite(integratorId: string, input: SiteType, now: Date): Site {
  return { ...fromInput(SiteInput, input), integrator_id: integratorId, created_at: now, updated_at: now };
}

/** Applies a partial update; `changed` is false when every given value equals the stored one. */
export function applySiteUpdate(site: Site, patch: SiteUpdateType, now: Date): { site: Site; changed: boolean } {
  const { next, changed } = applyPatch(SiteChanges, site, patch);
  return { site: changed ? { ...next, updated_at: now } : next, changed };
}

export function toSiteRecord(s: Site): SiteRecordType {
  return toWire(visibleFields(SiteFields), s);
}

/** The site as announced on SitesTopic. */
export function toSiteMessage(s: Site): SiteMessage {
  return { ...toWire(SiteFields, s), deleted: false };
}
