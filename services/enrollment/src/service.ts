import { EnrollmentOperations } from '@efs/api';
import { DevicesTopic, EnrollmentsTopic, ProgramGroupsTopic, ProgramsTopic, SitesTopic, SupplementsTopic } from '@efs/contracts';
import { Outbox } from '@efs/db';
import { bindHandlers, operationRouter } from '@efs/messaging';
import { systemClock, type Clock, type Service, type ServiceDeps } from '@efs/runtime';
import type { EnrollmentConfig } from './config.ts';
import type { EnrollmentContext } from './context.ts';
import { AutoApprover } from './handlers/autoApprover.ts';
import { autoEnroll } from './handlers/autoEnroll.ts';
import { createEnrollment } from './handlers/createEnrollment.ts';
import { createGroup } from './handlers/createGroup.ts';
import { deleteEnrollment } from './handlers/deleteEnrollment.ts';
import { deleteGroup } from './handlers/deleteGroup.ts';
import { getEnrollment } from './handlers/getEnrollment.ts';
import { listEnrollments } from './handlers/listEnrollments.ts';
import { listGroups } from './handlers/listGroups.ts';
import { listSiteEnrollments } from './handlers/listSiteEnrollments.ts';
import { onDevices } from './handlers/onDevices.ts';
import { onProgram } from './handlers/onProgram.ts';
import { onSites } from './handlers/onSites.ts';
import { onSupplement } from './handlers/onSupplement.ts';
import { updateEnrollment } from './handlers/updateEnrollment.ts';
import { updateGroup } from './handlers/updateGroup.ts';
import { KnexEnrollmentStore } from './store/enrollmentStore.ts';
import { EnrollmentWriter } from './store/enrollmentWriter.ts';
import { KnexGroupStore } from './store/groupStore.ts';
import { KnexReadModelStore } from './store/readModelStore.ts';
import { SiteDirectory } from './store/siteDirectory.ts';

export const ENROLLMENT_SCHEMA = 'enrollment';

export interface EnrollmentService extends Service {
  /** Handlers' shared state (service-level tests read stores through it). */
  readonly context: EnrollmentContext;
  readonly outbox: Outbox;
  readonly autoApprover: AutoApprover;
}

/**
 * Composition root of enrollment: enrollments of devices in programs and their lifecycle.
 * `clock` is the time every rule decides with; tests pass a fake one (no HTTP backdoor).
 */
export async function createEnrollmentService(deps: ServiceDeps<EnrollmentConfig>, opts: { clock?: Clock } = {}): Promise<EnrollmentService> {
  const logger = deps.logger.child({ service: 'enrollment' });
  const knex = deps.db.knex;
  const clock = opts.clock ?? systemClock;
  const readModels = new KnexReadModelStore(ENROLLMENT_SCHEMA);
  const store = new KnexEnrollmentStore(ENROLLMENT_SCHEMA);
  const groups = new KnexGroupStore(ENROLLMENT_SCHEMA);
  const outbox = new Outbox({ knex, schema: ENROLLMENT_SCHEMA, service: 'enrollment', publisher: deps.transport, logger, topics: [EnrollmentsTopic, ProgramGroupsTopic] });
  const writer = new EnrollmentWriter({ store, readModels, outbox, clock });
  const sites = new SiteDirectory({ knex, readModels, transport: deps.transport, logger, timeoutMs: deps.config.ENROLLMENT_COMMISSIONING_TIMEOUT_MS });
  const ctx: EnrollmentContext = { knex, schema: ENROLLMENT_SCHEMA, readModels, store, groups, writer, sites, clock, logger };
  const autoApprover = new AutoApprover({ knex, store, writer, clock, logger, pollMs: deps.config.ENROLLMENT_AUTO_APPROVE_POLL_MS });
  // A new PENDING enrollment of a sandbox program may fall due before the approver's next planned run.
  outbox.onCommit(() => autoApprover.wake());

  const handlers = bindHandlers(EnrollmentOperations, ctx, {
    createEnrollment,
    listSiteEnrollments,
    deleteEnrollment,
    autoEnroll,
    listEnrollments,
    getEnrollment,
    updateEnrollment,
    listGroups,
    createGroup,
    updateGroup,
    deleteGroup,
  });

  return {
    name: 'enrollment',
    context: ctx,
    outbox,
    autoApprover,
    async start() {
      await deps.transport.subscribe(ProgramsTopic, 'efs-enrollment-programs', onProgram(ctx), { fromBeginning: true });
      // In batches, one transaction each (a commission is a site and its devices).
      await deps.transport.subscribeBatch(SitesTopic, 'efs-enrollment-sites', onSites(ctx), { fromBeginning: true, idempotent: true });
      await deps.transport.subscribeBatch(DevicesTopic, 'efs-enrollment-devices', onDevices(ctx), { fromBeginning: true, idempotent: true });
      await deps.transport.subscribe(SupplementsTopic, 'efs-enrollment-supplements', onSupplement(ctx), { fromBeginning: true });
      outbox.start();
      autoApprover.start();
      await deps.transport.serve('enrollment', operationRouter(EnrollmentOperations, handlers, logger));
    },
    async stop() {
      await autoApprover.stop();
      await outbox.stop();
    },
  };
}
