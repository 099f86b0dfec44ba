import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiCommand } from '../domain/command.ts';

/** `GET /v1/site/{siteId}/dispatch/{id}` (legacy, site token): one command of the site. */
export const getDispatch = (ctx: Pick<DispatchContext, 'knex' | 'commands'>) =>
  implement(DispatchOperations.getDispatch, async ({ params, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const c = await ctx.commands.find(ctx.knex, params.dispatchId, { integratorId, siteId: params.siteId });
    if (!c) throw Errors.NOT_FOUND(`Dispatch ${params.dispatchId} not found`);
    return toApiCommand(c);
  });
