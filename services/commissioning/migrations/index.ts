import { outboxRelayMigration, type Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';
import { sitesDevices } from './20261122000100_sites_devices.ts';

export const migrations: readonly Migration[] = [messaging, sitesDevices, outboxRelayMigration];
