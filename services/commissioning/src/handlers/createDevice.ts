import { randomUUID } from 'node:crypto';
import { DeviceCreate, SiteParams } from '@efs/api';
import { DevicesTopic, deviceKey } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { AppError, validationError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { conflict } from '../commissioner.ts';
import { assertSiteAccess } from '../domain/access.ts';
import { newDevice, toDeviceMessage, toDeviceRecord } from '../domain/device.ts';
import { isUniqueViolation, type CommissioningStore } from '../store/commissioningStore.ts';

/** `POST /v1/site/{siteId}/devices` (client or site token): adds a device; an id is generated when none is given. */
export const createDevice = (knex: Knex, store: CommissioningStore, outbox: Outbox) =>
  operation({
    params: SiteParams,
    body: DeviceCreate,
    async handle({ params, body, principal }) {
      const integratorId = assertSiteAccess(principal, params.siteId);
      if (body.site_id !== params.siteId) {
        throw validationError([{ path: ['site_id'], message: `site_id must equal the site of the path (${params.siteId})`, code: 'custom' }], 'body');
      }
      const device = newDevice(integratorId, body.id ?? randomUUID(), body, new Date());
      try {
        await knex.transaction(async (trx) => {
          if (!(await store.getSite(integratorId, params.siteId, trx))) throw new AppError('NOT_FOUND', `Site ${params.siteId} not found`);
          if ((await store.existingDeviceIds(trx, integratorId, [device.id])).length > 0) throw conflict(`Device ${device.id} exists already`, ['id']);
          await store.insertDevice(trx, device);
          await outbox.enqueue(trx, DevicesTopic, deviceKey(integratorId, device.site_id, device.id), toDeviceMessage(device));
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`Device ${device.id} exists already`, ['id']);
        throw err;
      }
      return { body: toDeviceRecord(device) };
    },
  });
