import { integratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { settle, toApiSettingsRequest } from '../domain/settings.ts';

/**
 * `PATCH /v1/settings/{settingsRequestId}` (client token): the device cloud applied the setting
 * (APPLIED: commissioning then shows it as the device's `configuration.reserve_percentage`) or
 * could not (FAILED). Answers the request as it now is.
 */
export const updateSettingsRequest = (ctx: Pick<DispatchContext, 'knex' | 'settings' | 'settingsWriter' | 'clock'>) =>
  implement(DispatchOperations.updateSettingsRequest, async ({ params, body, principal }) => {
    const integratorId = integratorOf(principal);
    const request = await ctx.knex.transaction(async (trx) => {
      const r = await ctx.settings.find(trx, integratorId, params.settingsRequestId, { forUpdate: true });
      if (!r) throw Errors.NOT_FOUND(`Settings request ${params.settingsRequestId} not found`);
      const { request: next, changed } = settle(r, body.status, body.status_reason ?? null, ctx.clock());
      if (changed) await ctx.settingsWriter.update(trx, next);
      return next;
    });
    return toApiSettingsRequest(request);
  });
