import { outboxRelayMigration, type Migration } from '@efs/db';
import { auth } from './20261122000000_auth.ts';
import { tokens } from './20261122010000_tokens.ts';
import { sessionIssuer } from './20261122020000_session_issuer.ts';
import { portalSettings } from './20261123000000_portal_settings.ts';
import { deviceDirectory } from './20261201000100_device_directory.ts';
import { idempotencyKeys } from './20261201000200_idempotency_keys.ts';
import { signingKeyRevocation } from './20261203000000_signing_key_revocation.ts';
import { openAdrClients } from './20261204000000_openadr_clients.ts';
import { portalOidc } from './20261205000000_portal_oidc.ts';

export const migrations: readonly Migration[] = [auth, tokens, sessionIssuer, portalSettings, outboxRelayMigration, deviceDirectory, idempotencyKeys, signingKeyRevocation, openAdrClients, portalOidc];
