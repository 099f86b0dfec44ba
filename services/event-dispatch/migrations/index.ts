import { outboxRelayMigration, type Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';
import { dispatch } from './20261201000000_dispatch.ts';
import { settings } from './20261202000000_settings.ts';

export const migrations: readonly Migration[] = [messaging, dispatch, outboxRelayMigration, settings];
