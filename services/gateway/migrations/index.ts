import type { Migration } from '@efs/db';
import { auth } from './20261122000000_auth.ts';
import { tokens } from './20261122010000_tokens.ts';
import { sessionIssuer } from './20261122020000_session_issuer.ts';

export const migrations: readonly Migration[] = [auth, tokens, sessionIssuer];
