import { outboxRelayMigration, type Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';
import { readings } from './20261124000000_readings.ts';

// The `latest` pointer table of 20261124000000_readings is no longer read or written, but stays for
// now: during a rolling update the previous release's pods still write it, and dropping it in the
// migration that runs before the new pods would fail their batches. A later release drops it.
export const migrations: readonly Migration[] = [messaging, readings, outboxRelayMigration];
