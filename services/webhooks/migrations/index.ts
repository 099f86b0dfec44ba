import type { Migration } from '@efs/db';
import { webhooks } from './20261210000000_webhooks.ts';

export const migrations: readonly Migration[] = [webhooks];
