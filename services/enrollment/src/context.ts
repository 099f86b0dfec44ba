import type { Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Clock, EnrollmentWriter } from './enrollmentWriter.ts';
import type { SiteLookup } from './siteLookup.ts';
import type { EnrollmentStore } from './store/enrollmentStore.ts';
import type { GroupStore } from './store/groupStore.ts';
import type { ReadModelStore } from './store/readModelStore.ts';

/** What the handlers of the enrollment service share. */
export interface EnrollmentContext {
  knex: Knex;
  schema: string;
  readModels: ReadModelStore;
  store: EnrollmentStore;
  groups: GroupStore;
  writer: EnrollmentWriter;
  lookup: SiteLookup;
  clock: Clock;
  logger: Logger;
}
