import type { Migration } from '@efs/db';
import { auth } from './20261122000000_auth.ts';
import { tokens } from './20261122010000_tokens.ts';

export const migrations: readonly Migration[] = [auth, tokens];
