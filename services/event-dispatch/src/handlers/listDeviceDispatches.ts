import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiCommand } from '../domain/command.ts';

/** `GET /v1/site/{siteId}/device/{deviceId}/dispatches` (legacy, site token): the device's commands, oldest first. */
export const listDeviceDispatches = (ctx: Pick<DispatchContext, 'knex' | 'commands'>) =>
  implement(DispatchOperations.listDeviceDispatches, async ({ params, query, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const list = await ctx.commands.forDevice(ctx.knex, integratorId, params.siteId, params.deviceId, query.skip, query.limit);
    return list.map(toApiCommand);
  });
