import type { Outbox, Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import type { Clock } from '@efs/runtime';
import type { CommissioningConfig } from './config.ts';
import type { CommissioningStore } from './store/commissioningStore.ts';
import type { ProgramReadModel } from './store/programReadModel.ts';
import type { SiteWriter } from './store/siteWriter.ts';

/** The Postgres schema of commissioning's tables. */
export const COMMISSIONING_SCHEMA = 'commissioning';

/**
 * What commissioning's parts are built from (in service.ts); each handler takes the few of them
 * it uses (`Pick<CommissioningContext, ...>`).
 */
export interface CommissioningContext {
  knex: Knex;
  store: CommissioningStore;
  outbox: Outbox;
  writer: SiteWriter;
  programs: ProgramReadModel;
  transport: Transport;
  config: CommissioningConfig;
  clock: Clock;
  logger: Logger;
}
