import type { Migration } from '@efs/db';
import { auth } from './20261122000000_auth.ts';

export const migrations: readonly Migration[] = [auth];
