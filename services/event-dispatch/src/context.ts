import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { DispatchMetrics } from './dispatchMetrics.ts';
import type { CommandStore } from './store/commandStore.ts';
import type { CommandWriter } from './store/commandWriter.ts';
import type { DeliveredEnergy } from './store/deliveredEnergy.ts';
import type { EventStore } from './store/eventStore.ts';
import type { EventWriter } from './store/eventWriter.ts';
import type { FanOut } from './store/fanOut.ts';
import type { ReadModelStore } from './store/readModelStore.ts';
import type { SettingsStore } from './store/settingsStore.ts';
import type { SettingsWriter } from './store/settingsWriter.ts';

/**
 * Everything event-dispatch's handlers may be given, built once in service.ts. A handler takes
 * only the members it uses (`Pick<DispatchContext, 'events' | 'clock'>`), so its signature says
 * what it touches.
 */
export interface DispatchContext {
  knex: Knex;
  /** The service's Postgres schema (idempotency records are kept in it). */
  schema: string;
  readModels: ReadModelStore;
  events: EventStore;
  commands: CommandStore;
  eventWriter: EventWriter;
  commandWriter: CommandWriter;
  fanOut: FanOut;
  settings: SettingsStore;
  settingsWriter: SettingsWriter;
  /** What devices delivered, from telemetry-ingest (event performance). */
  delivered: DeliveredEnergy;
  metrics: DispatchMetrics;
  clock: Clock;
  logger: Logger;
  /** Events reaching at most this many devices get their commands in the request's own transaction. */
  inlineFanOutMax: number;
}
