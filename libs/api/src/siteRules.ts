/**
 * Rules of the Site entity that the portal page needs too. It imports only an import-free list of
 * the contracts (no zod), so that the page bundles the very definitions the API validates with and
 * the enrollment service enforces.
 */

export { STATE_CODES } from '@efs/contracts/stateCodes';

/**
 * A site's information is complete (decisions.md, Site) with a name (first and last, or a
 * company), email, street, city, state and zip code.
 */
export type SiteCompletenessFields = 'first_name' | 'last_name' | 'company_name' | 'email' | 'street_address' | 'city' | 'state_code' | 'zip_code';

/** Fields still missing for the site's information to be complete, in a stable order. */
export function missingSiteFields(site: { [K in SiteCompletenessFields]: string | null | undefined }): string[] {
  const blank = (v: string | null | undefined) => v === null || v === undefined || v.trim() === '';
  const missing: string[] = [];
  if (blank(site.company_name)) {
    if (blank(site.first_name)) missing.push('first_name');
    if (blank(site.last_name)) missing.push('last_name');
  }
  for (const f of ['email', 'street_address', 'city', 'state_code', 'zip_code'] as const) if (blank(site[f])) missing.push(f);
  return missing;
}
