import { integratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiSettingsRequest } from '../domain/settings.ts';

/** `GET /v1/settings?status=` (client token): the integrator's settings requests, oldest first, for clouds that poll. */
export const listSettingsRequests = (ctx: Pick<DispatchContext, 'knex' | 'settings'>) =>
  implement(DispatchOperations.listSettingsRequests, async ({ query, principal }) => {
    const list = await ctx.settings.list(ctx.knex, integratorOf(principal), { status: query.status, skip: query.skip, limit: query.limit });
    return list.map(toApiSettingsRequest);
  });
