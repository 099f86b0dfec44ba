import { DispatchOperations } from '@efs/api';
import { CommandsTopic, DemandResponseEventsTopic, DevicesTopic, EnrollmentsTopic, ProgramGroupsTopic, ProgramsTopic, SettingsRequestsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import { systemClock, type Clock, type Service, type ServiceDeps } from '@efs/runtime';
import type { DispatchConfig } from './config.ts';
import type { DispatchContext } from './context.ts';
import { dispatchMetrics } from './dispatchMetrics.ts';
import { acknowledgeCommand } from './handlers/acknowledgeCommand.ts';
import { cancelEvent } from './handlers/cancelEvent.ts';
import { createEvent } from './handlers/createEvent.ts';
import { createSettingsRequest } from './handlers/createSettingsRequest.ts';
import { getDispatch } from './handlers/getDispatch.ts';
import { getEvent } from './handlers/getEvent.ts';
import { getSiteEvent } from './handlers/getSiteEvent.ts';
import { listCommands } from './handlers/listCommands.ts';
import { listDeviceDispatches } from './handlers/listDeviceDispatches.ts';
import { listEventSites } from './handlers/listEventSites.ts';
import { listEvents } from './handlers/listEvents.ts';
import { listSettingsRequests } from './handlers/listSettingsRequests.ts';
import { listSiteEvents } from './handlers/listSiteEvents.ts';
import { onDevices } from './handlers/onDevices.ts';
import { onEnrollment } from './handlers/onEnrollment.ts';
import { onEvent } from './handlers/onEvent.ts';
import { onGroup } from './handlers/onGroup.ts';
import { onProgram } from './handlers/onProgram.ts';
import { Scheduler } from './handlers/scheduler.ts';
import { updateDispatch } from './handlers/updateDispatch.ts';
import { updateSettingsRequest } from './handlers/updateSettingsRequest.ts';
import { updateSiteEvent } from './handlers/updateSiteEvent.ts';
import { KnexCommandStore } from './store/commandStore.ts';
import { CommandWriter } from './store/commandWriter.ts';
import { DeliveredEnergy } from './store/deliveredEnergy.ts';
import { KnexEventStore } from './store/eventStore.ts';
import { EventWriter } from './store/eventWriter.ts';
import { FanOut } from './store/fanOut.ts';
import { KnexReadModelStore } from './store/readModelStore.ts';
import { KnexSettingsStore } from './store/settingsStore.ts';
import { SettingsWriter } from './store/settingsWriter.ts';

export const DISPATCH_SCHEMA = 'dispatch';

/** How long a scrape's count of events may run in the database (the scrape itself waits at most 3 s). */
const EVENTS_QUERY_TIMEOUT_MS = 2000;

export interface DispatchService extends Service {
  /** Handlers' shared state (service-level tests read stores through it). */
  readonly context: DispatchContext;
  readonly outbox: Outbox;
  readonly scheduler: Scheduler;
}

/**
 * Composition root of event-dispatch: demand-response events, their commands to device clouds
 * and the end user's participation. `clock` is the time every rule decides with; tests pass a
 * fake one (no HTTP backdoor).
 */
export async function createDispatchService(deps: ServiceDeps<DispatchConfig>, opts: { clock?: Clock } = {}): Promise<DispatchService> {
  const logger = deps.logger.child({ service: 'event-dispatch' });
  const knex = deps.db.knex;
  const clock = opts.clock ?? systemClock;
  const readModels = new KnexReadModelStore(DISPATCH_SCHEMA);
  const events = new KnexEventStore(DISPATCH_SCHEMA);
  const commands = new KnexCommandStore(DISPATCH_SCHEMA, deps.db.kind);
  const outbox = new Outbox({ knex, schema: DISPATCH_SCHEMA, service: 'event-dispatch', publisher: deps.transport, logger, topics: [DemandResponseEventsTopic, CommandsTopic, SettingsRequestsTopic], batchSize: deps.config.DISPATCH_OUTBOX_BATCH, kind: deps.db.kind });
  const metrics = dispatchMetrics();
  const commandWriter = new CommandWriter({ store: commands, outbox, metrics });
  const eventWriter = new EventWriter({ store: events, commands, commandWriter, outbox });
  const fanOut = new FanOut({ knex, events, commands, readModels, eventWriter, commandWriter, clock, logger });
  const settings = new KnexSettingsStore(DISPATCH_SCHEMA);
  const settingsWriter = new SettingsWriter({ store: settings, outbox });
  const delivered = new DeliveredEnergy({ transport: deps.transport, timeoutMs: deps.config.DISPATCH_TELEMETRY_TIMEOUT_MS });
  const ctx: DispatchContext = { knex, schema: DISPATCH_SCHEMA, readModels, events, commands, eventWriter, commandWriter, fanOut, settings, settingsWriter, delivered, metrics, clock, logger, inlineFanOutMax: deps.config.DISPATCH_INLINE_FAN_OUT_MAX };
  const scheduler = new Scheduler({ knex, events, commands, eventWriter, commandWriter, fanOut, clock, logger, pollMs: deps.config.DISPATCH_SCHEDULER_POLL_MS });
  // A new event or command may fall due before the scheduler's next planned run.
  outbox.onCommit(() => scheduler.wake());

  const handlers = bindHandlers(DispatchOperations, ctx, {
    createEvent,
    listEvents,
    getEvent,
    cancelEvent,
    listEventSites,
    listCommands,
    acknowledgeCommand,
    listSiteEvents,
    getSiteEvent,
    updateSiteEvent,
    listDeviceDispatches,
    getDispatch,
    updateDispatch,
    createSettingsRequest,
    listSettingsRequests,
    updateSettingsRequest,
  });

  let stopEventsGauge: (() => void) | undefined;
  return {
    name: 'event-dispatch',
    context: ctx,
    outbox,
    scheduler,
    async start() {
      await deps.transport.subscribe(ProgramsTopic, 'efs-dispatch-programs', onProgram(ctx), { fromBeginning: true });
      // In batches, one transaction each (a commission is a site and its devices).
      await deps.transport.subscribeBatch(DevicesTopic, 'efs-dispatch-devices', onDevices(ctx), { fromBeginning: true, idempotent: true });
      await deps.transport.subscribe(EnrollmentsTopic, 'efs-dispatch-enrollments', onEnrollment(ctx), { fromBeginning: true });
      await deps.transport.subscribe(ProgramGroupsTopic, 'efs-dispatch-groups', onGroup(ctx), { fromBeginning: true });
      await deps.transport.subscribe(DemandResponseEventsTopic, 'efs-dispatch-fan-out', onEvent(ctx), { fromBeginning: true });
      // What came due while the service was down is applied before it answers anything.
      await scheduler.runOnce();
      outbox.start();
      scheduler.start();
      stopEventsGauge = metrics.observeEvents(() => events.countByStatus(knex, clock(), EVENTS_QUERY_TIMEOUT_MS));
      await deps.transport.serve('dispatch', operationRouter(DispatchOperations, handlers, logger));
    },
    async stop() {
      stopEventsGauge?.();
      await scheduler.stop();
      await outbox.stop();
    },
  };
}
