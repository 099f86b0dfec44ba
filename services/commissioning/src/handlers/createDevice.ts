import { randomUUID } from 'node:crypto';
import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, deviceKey } from '@efs/contracts';
import { isUniqueViolation } from '@efs/db';
import { Errors, validationError } from '@efs/errors';
import { implement } from '@efs/messaging';
import { siteIntegratorOf } from '@efs/access';
import type { CommissioningContext } from '../context.ts';
import { newDevice, toDeviceMessage, toDeviceRecord } from '../domain/device.ts';

/** `POST /v1/site/{siteId}/devices` (client or site token): adds a device; an id is generated when none is given. */
export const createDevice = ({ knex, store, outbox, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'outbox' | 'clock'>) =>
  implement(CommissioningOperations.createDevice, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    if (body.site_id !== params.siteId) {
      throw validationError([{ path: ['site_id'], message: `site_id must equal the site of the path (${params.siteId})`, code: 'custom' }], 'body');
    }
    const device = newDevice(integratorId, body.id ?? randomUUID(), body, clock());
    try {
      await knex.transaction(async (trx) => {
        if (!(await store.getSite(integratorId, params.siteId, trx))) throw Errors.NOT_FOUND(`Site ${params.siteId} not found`);
        if ((await store.existingDeviceIds(trx, integratorId, [device.id])).length > 0) throw Errors.CONFLICT.forField(`Device ${device.id} exists already`, ['id']);
        await store.insertDevice(trx, device);
        await outbox.enqueue(trx, DevicesTopic, deviceKey(integratorId, device.site_id, device.id), toDeviceMessage(device));
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.CONFLICT.forField(`Device ${device.id} exists already`, ['id']);
      throw err;
    }
    return toDeviceRecord(device);
  });
