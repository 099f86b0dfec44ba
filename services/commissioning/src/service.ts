import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, SettingsRequestsTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { operationRouter, type HandlerMap } from '@efs/messaging';
import type { Service, ServiceDeps } from '@efs/runtime';
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
import { onSettingsRequest } from './handlers/onSettingsRequest.ts';
import { updateDevice } from './handlers/updateDevice.ts';
import { updateSite } from './handlers/updateSite.ts';
import { KnexCommissioningStore } from './store/commissioningStore.ts';
import { ProgramReadModel } from './store/programReadModel.ts';
import { SiteWriter } from './store/siteWriter.ts';

export const COMMISSIONING_SCHEMA = 'commissioning';

/** Composition root of commissioning: sites and devices of integrators, announced on their state topics. */
export async function createCommissioningService(deps: ServiceDeps<CommissioningConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'commissioning' });
  const knex = deps.db.knex;
  const store = new KnexCommissioningStore(knex, COMMISSIONING_SCHEMA);
  const outbox = new Outbox({ knex, schema: COMMISSIONING_SCHEMA, publisher: deps.transport, logger, topics: [SitesTopic, DevicesTopic, SupplementsTopic] });
  const writer = new SiteWriter({ knex, store, outbox, groupCommit: deps.db.kind === 'postgres' });
  const programs = new ProgramReadModel({ transport: deps.transport, timeoutMs: deps.config.COMMISSIONING_PROGRAMS_CATCH_UP_MS, logger });

  const handlers = {
    commission: commission({ writer, programs, transport: deps.transport, config: deps.config, logger }),
    ensureSite: ensureSite(store, writer),
    listSites: listSites(store),
    getSite: getSite(store),
    updateSite: updateSite(knex, store, writer),
    createDevice: createDevice(knex, store, outbox),
    listDevices: listDevices(store),
    getDevice: getDevice(store),
    updateDevice: updateDevice({ knex, store, outbox, transport: deps.transport, config: deps.config }),
    deleteDevice: deleteDevice(knex, store, outbox),
    createSupplement: createSupplement(knex, store, outbox),
  } satisfies HandlerMap<typeof CommissioningOperations>;

  return {
    name: 'commissioning',
    async start() {
      await deps.transport.subscribe(SettingsRequestsTopic, 'efs-commissioning-settings', onSettingsRequest(knex, store, outbox), { fromBeginning: true });
      outbox.start();
      await programs.start();
      await deps.transport.serve('commissioning', operationRouter(CommissioningOperations, handlers, logger));
    },
    async stop() {
      await outbox.stop();
    },
  };
}
