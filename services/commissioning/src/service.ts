import { CommissioningOperations } from '@efs/api';
import { DevicesTopic, SettingsRequestsTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import { systemClock, type Service, type ServiceDeps } from '@efs/runtime';
import type { CommissioningConfig } from './config.ts';
import { COMMISSIONING_SCHEMA, type CommissioningContext } from './context.ts';
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

/** Composition root of commissioning: sites and devices of integrators, announced on their state topics. */
export async function createCommissioningService(deps: ServiceDeps<CommissioningConfig>): Promise<Service> {
  const logger = deps.logger.child({ service: 'commissioning' });
  const knex = deps.db.knex;
  const store = new KnexCommissioningStore(knex, COMMISSIONING_SCHEMA);
  const outbox = new Outbox({ knex, schema: COMMISSIONING_SCHEMA, service: 'commissioning', publisher: deps.transport, logger, topics: [SitesTopic, DevicesTopic, SupplementsTopic] });
  const clock = systemClock;
  const writer = new SiteWriter({ knex, store, outbox, clock, groupCommit: deps.db.kind === 'postgres' });
  const programs = new ProgramReadModel({ transport: deps.transport, timeoutMs: deps.config.COMMISSIONING_PROGRAMS_CATCH_UP_MS, logger });
  const ctx: CommissioningContext = { knex, store, outbox, writer, programs, transport: deps.transport, config: deps.config, clock, logger };

  const handlers = bindHandlers(CommissioningOperations, ctx, {
    commission,
    ensureSite,
    listSites,
    getSite,
    updateSite,
    createDevice,
    listDevices,
    getDevice,
    updateDevice,
    deleteDevice,
    createSupplement,
  });

  return {
    name: 'commissioning',
    async start() {
      await deps.transport.subscribe(SettingsRequestsTopic, 'efs-commissioning-settings', onSettingsRequest(ctx), { fromBeginning: true });
      outbox.start();
      await programs.start();
      await deps.transport.serve('commissioning', operationRouter(CommissioningOperations, handlers, logger));
    },
    async stop() {
      await outbox.stop();
    },
  };
}
