import { randomUUID } from 'node:crypto';
import { siteIntegratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { SUPERSEDED, assertAllowedLevel, toApiSettingsRequest, type SettingsRequest } from '../domain/settings.ts';

/**
 * Internal, from commissioning for `PATCH /v1/site/{siteId}/device/{deviceId}` with `settings`
 * (the end user's principal): a PENDING settings request, announced for the device cloud
 * (settings.apply). A level below the minimum of a program the device is ACTIVE in is 400. An
 * older PENDING request of the device is superseded (FAILED), so requests settle in order.
 */
export const createSettingsRequest = (ctx: Pick<DispatchContext, 'knex' | 'readModels' | 'settings' | 'settingsWriter' | 'clock'>) =>
  implement(DispatchOperations.createSettingsRequest, async ({ body, principal }) => {
    const integratorId = siteIntegratorOf(principal, body.site_id);
    const level = body.settings.backup_reserve_percentage;
    assertAllowedLevel(level, await ctx.readModels.deviceMinimum(ctx.knex, integratorId, body.site_id, body.device_id));
    const request = await ctx.knex.transaction(async (trx) => {
      const now = ctx.clock();
      for (const old of await ctx.settings.lockPending(trx, integratorId, body.site_id, body.device_id)) {
        await ctx.settingsWriter.update(trx, { ...old, status: 'FAILED', status_reason: SUPERSEDED, updated_at: now });
      }
      const r: SettingsRequest = { id: randomUUID(), integrator_id: integratorId, site_id: body.site_id, device_id: body.device_id, backup_reserve_percentage: level, status: 'PENDING', status_reason: null, created_at: now, updated_at: now };
      await ctx.settingsWriter.create(trx, r);
      return r;
    });
    return toApiSettingsRequest(request);
  });
