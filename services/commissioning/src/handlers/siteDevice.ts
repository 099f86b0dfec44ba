import type { Principal } from '@efs/contracts';
import type { Knex } from '@efs/db';
import { AppError } from '@efs/errors';
import { assertSiteAccess } from '../domain/access.ts';
import type { Device } from '../domain/device.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/** The device of a `/v1/site/{siteId}/device/{deviceId}` path: 404 unless it exists at that site of the caller's integrator. */
export async function siteDevice(store: CommissioningStore, principal: Principal, siteId: string, deviceId: string, trx?: Knex.Transaction): Promise<Device> {
  const integratorId = assertSiteAccess(principal, siteId);
  const device = await store.getDevice(integratorId, deviceId, trx);
  if (!device || device.site_id !== siteId) throw new AppError('NOT_FOUND', `Device ${deviceId} not found at site ${siteId}`);
  return device;
}
