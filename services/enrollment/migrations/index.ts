import { outboxRelayMigration, type Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';
import { enrollments } from './20261123000000_enrollments.ts';

export const migrations: readonly Migration[] = [messaging, enrollments, outboxRelayMigration];
