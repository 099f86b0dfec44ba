import { CatalogOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { toApiProgram } from '../domain/program.ts';
import type { CatalogContext } from '../context.ts';
import { siteIntegratorOf } from '@efs/access';

/** `GET /v1/site/{siteId}/program/{programId}` (site token): one program, with earnings from the site's devices. */
export const getSiteProgram = ({ programs, sites }: Pick<CatalogContext, 'programs' | 'sites'>) =>
  implement(CatalogOperations.getSiteProgram, async ({ params, principal }) => {
    const site = await sites.site(siteIntegratorOf(principal, params.siteId), params.siteId);
    const program = await programs.get(params.programId);
    if (!program) throw Errors.NOT_FOUND(`Program ${params.programId} not found`);
    return toApiProgram(program, site.devices);
  });
