import type { Migration } from '@efs/db';
import { messaging } from './20261122000000_messaging.ts';

export const migrations: readonly Migration[] = [messaging];
