import { SiteProgramParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { toApiProgram } from '../domain/program.ts';
import type { SiteDirectory } from '../siteDirectory.ts';
import type { ProgramStore } from '../store/programStore.ts';
import { siteIntegrator } from './access.ts';

/** `GET /v1/site/{siteId}/program/{programId}` (site token): one program, with earnings from the site's devices. */
export const getSiteProgram = (store: ProgramStore, sites: SiteDirectory) =>
  operation({
    params: SiteProgramParams,
    async handle({ params, principal }) {
      const site = await sites.site(siteIntegrator(principal, params.siteId), params.siteId);
      const program = await store.get(params.programId);
      if (!program) throw new AppError('NOT_FOUND', `Program ${params.programId} not found`);
      return { body: toApiProgram(program, site.devices) };
    },
  });
