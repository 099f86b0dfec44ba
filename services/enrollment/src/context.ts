import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock } from '@efs/runtime';
import type { EnrollmentStore } from './store/enrollmentStore.ts';
import type { EnrollmentWriter } from './store/enrollmentWriter.ts';
import type { GroupStore } from './store/groupStore.ts';
import type { ReadModelStore } from './store/readModelStore.ts';
import type { SiteDirectory } from './store/siteDirectory.ts';

/**
 * Everything the enrollment service's handlers may be given, built once in service.ts. A handler
 * takes only the members it uses (`Pick<EnrollmentContext, 'store' | 'clock'>`), so its
 * signature says what it touches.
 */
export interface EnrollmentContext {
  knex: Knex;
  /** The service's Postgres schema (idempotency records are kept in it). */
  schema: string;
  readModels: ReadModelStore;
  store: EnrollmentStore;
  groups: GroupStore;
  writer: EnrollmentWriter;
  sites: SiteDirectory;
  clock: Clock;
  logger: Logger;
}
