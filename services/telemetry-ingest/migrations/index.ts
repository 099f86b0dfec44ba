import { outboxRelayMigration, type Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';
import { noLatestPointer } from './20261223000000_no_latest_pointer.ts';
import { readings } from './20261124000000_readings.ts';

export const migrations: readonly Migration[] = [messaging, readings, outboxRelayMigration, noLatestPointer];
