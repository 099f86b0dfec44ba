import { DevicesTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { operationRouter } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
import { Commissioner } from './commissioner.ts';
import type { CommissioningConfig } from './config.ts';
import { commission } from './handlers/commission.ts';
import { createDevice } from './handlers/createDevice.ts';
import { createSupplement } from './handlers/createSupplement.ts';
import { deleteDevice } from './handlers/deleteDevice.ts';
import { ensureSite } from './handlers/ensureSite.ts';
import { getDevice } from './handlers/getDevice.ts';
import { getSite } from './handlers/getSite.ts';
import { listDevices } from './handlers/listDevices.ts';
import { listSites } from './handlers/listSites.ts';
import { updateDevice } from './handlers/updateDevice.ts';
import { updateSite } from './handlers/updateSite.ts';
import { KnexCommissioningStore } from './store/commissioningStore.ts';

export const COMMISSIONING_SCHEMA = 'commissioning';

/** Composition root of commissioning: sites and devices of integrators, announced on their state topics. */
export async function createCommissioningService(deps: ServiceDeps<CommissioningConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'commissioning' });
  const knex = deps.db.knex;
  const store = new KnexCommissioningStore(knex, COMMISSIONING_SCHEMA);
  const outbox = new Outbox({ knex, schema: COMMISSIONING_SCHEMA, publisher: deps.transport, logger, topics: [SitesTopic, DevicesTopic, SupplementsTopic] });
  const commissioner = new Commissioner({ knex, store, outbox, transport: deps.transport, config: deps.config, logger });

  const operations = {
    'commission.create': commission(commissioner),
    'sites.ensure': ensureSite(store, commissioner),
    'sites.list': listSites(store),
    'sites.get': getSite(store),
    'sites.update': updateSite(knex, store, outbox),
    'devices.create': createDevice(knex, store, outbox),
    'devices.list': listDevices(store),
    'devices.get': getDevice(store),
    'devices.update': updateDevice(knex, store, outbox),
    'devices.delete': deleteDevice(knex, store, outbox),
    'supplements.create': createSupplement(knex, store, outbox),
  };

  return {
    name: 'commissioning',
    async start() {
      outbox.start();
      await deps.transport.serve('commissioning', operationRouter(operations, logger));
    },
    async stop() {
      await outbox.stop();
    },
  };
}
