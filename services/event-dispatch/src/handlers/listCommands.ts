import { integratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiCommand } from '../domain/command.ts';

/**
 * `GET /v1/commands` (client token): the integrator's commands, filtered by status, device status,
 * site, device and `updated_since` (inclusive), ordered by `updated_at` then `id`, so a cloud that
 * polls with the last `updated_at` it saw misses nothing.
 */
export const listCommands = (ctx: Pick<DispatchContext, 'knex' | 'commands'>) =>
  implement(DispatchOperations.listCommands, async ({ query, principal }) => {
    const list = await ctx.commands.list(ctx.knex, integratorOf(principal), {
      status: query.status,
      deviceStatus: query.device_status,
      siteId: query.site_id,
      deviceId: query.device_id,
      updatedSince: query.updated_since === undefined ? undefined : new Date(query.updated_since),
      skip: query.skip,
      limit: query.limit,
    });
    return list.map(toApiCommand);
  });
