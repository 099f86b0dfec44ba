import { randomUUID } from 'node:crypto';
import { CommissioningOperations } from '@efs/api';
import { SupplementsTopic, siteKey } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { integratorOf } from '@efs/access';
import type { CommissioningContext } from '../context.ts';

/** `POST /v1/supplements` (client token): information programs ask for after commissioning, announced on SupplementsTopic. */
export const createSupplement = ({ knex, store, outbox, clock }: Pick<CommissioningContext, 'knex' | 'store' | 'outbox' | 'clock'>) =>
  implement(CommissioningOperations.createSupplement, async ({ body, principal }) => {
    const integratorId = integratorOf(principal);
    const supplement = { id: randomUUID(), integrator_id: integratorId, site_id: body.site_id, device_id: body.device_id ?? null, data: body.data, created_at: clock() };
    await knex.transaction(async (trx) => {
      if (!(await store.getSite(integratorId, body.site_id, trx))) throw Errors.NOT_FOUND.forField(`Site ${body.site_id} not found`, ['site_id']);
      if (supplement.device_id !== null) {
        const device = await store.getDevice(integratorId, supplement.device_id, trx);
        if (!device || device.site_id !== body.site_id) throw Errors.NOT_FOUND.forField(`Device ${supplement.device_id} not found at site ${body.site_id}`, ['device_id']);
      }
      await store.insertSupplement(trx, supplement);
      await outbox.enqueue(trx, SupplementsTopic, siteKey(integratorId, body.site_id), {
        id: supplement.id,
        integrator_id: integratorId,
        site_id: supplement.site_id,
        device_id: supplement.device_id,
        data: Object.fromEntries(Object.entries(body.data).map(([k, v]) => [k, JSON.stringify(v ?? null)])),
        created_at: supplement.created_at.toISOString(),
      });
    });
    const { integrator_id: _i, created_at, ...rest } = supplement;
    return { ...rest, created_at: created_at.toISOString() };
  });
