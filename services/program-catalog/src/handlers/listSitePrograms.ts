import { CatalogOperations } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { deviceTypesOf, isEligible, toApiProgram } from '../domain/program.ts';
import type { CatalogContext } from '../context.ts';
import { siteIntegratorOf } from '@efs/access';

/**
 * `GET /v1/site/{siteId}/programs` (site token): programs for the site's zip code and device
 * types (each overridable by `zip_code` and `device_type`), with earnings from the site's devices.
 */
export const listSitePrograms = ({ programs, sites }: Pick<CatalogContext, 'programs' | 'sites'>) =>
  implement(CatalogOperations.listSitePrograms, async ({ params, query, principal }) => {
    const site = await sites.site(siteIntegratorOf(principal, params.siteId), params.siteId);
    const zip = query.zip_code ?? site.zip_code;
    // An empty list would say "no program here" when the truth is "we do not know where here is".
    if (!zip) throw Errors.SITE_INFO_INCOMPLETE.forField('The site has no zip code; give one (PATCH the site, or the zip_code parameter)', ['zip_code'], 'query');
    const types = query.device_type ?? deviceTypesOf(site.devices);
    const eligible = (await programs.listByZip(zipArea(zip))).filter((p) => isEligible(p, zip, types));
    return eligible.slice(query.skip, query.skip + query.limit).map((p) => toApiProgram(p, site.devices));
  });
