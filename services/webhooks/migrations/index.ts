import type { Migration } from '@efs/db';
import { retention } from './20261215000000_retention.ts';
import { webhooks } from './20261210000000_webhooks.ts';

export const migrations: readonly Migration[] = [webhooks, retention];
