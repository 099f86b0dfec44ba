import { SiteParams, SiteProgramsQuery } from '@efs/api';
import { operation } from '@efs/messaging';
import { deviceTypesOf, isEligible, toApiProgram } from '../domain/program.ts';
import type { SiteDirectory } from '../siteDirectory.ts';
import type { ProgramStore } from '../store/programStore.ts';
import { siteIntegrator } from './access.ts';

/**
 * `GET /v1/site/{siteId}/programs` (site token): programs for the site's zip code and device
 * types (each overridable by `zip_code` and `device_type`), with earnings from the site's devices.
 */
export const listSitePrograms = (store: ProgramStore, sites: SiteDirectory) =>
  operation({
    params: SiteParams,
    query: SiteProgramsQuery,
    async handle({ params, query, principal }) {
      const site = await sites.site(siteIntegrator(principal, params.siteId), params.siteId);
      const zip = query.zip_code ?? site.zip_code;
      if (!zip) return { body: [] };
      const types = query.device_type ?? deviceTypesOf(site.devices);
      const programs = (await store.listByZip(zip)).filter((p) => isEligible(p, zip, types));
      return { body: programs.slice(query.skip, query.skip + query.limit).map((p) => toApiProgram(p, site.devices)) };
    },
  });
