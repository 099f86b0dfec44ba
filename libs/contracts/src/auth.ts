import { defineTopic } from './topic.ts';

/**
 * A long-lived credential (client token or utility API key) as every gateway replica keeps it in
 * memory, keyed by credential id on a compacted topic. Only the SHA-256 of the secret travels;
 * `revoked_at` set means the credential stops working everywhere once this message is consumed.
 */
export const CredentialSchema = {
  type: 'record',
  name: 'Credential',
  namespace: 'efs.auth',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'CredentialKind', namespace: 'efs.auth', symbols: ['CLIENT_TOKEN', 'UTILITY_KEY'] } },
    { name: 'owner_id', type: 'string', doc: 'integrator id of a client token, utility id of a utility key' },
    { name: 'token_hash', type: 'string', doc: 'hex SHA-256 of the secret' },
    { name: 'created_at', type: 'string' },
    { name: 'revoked_at', type: ['null', 'string'], default: null },
  ],
} as const;

/** Published by the gateway's outbox (auth schema); consumed from the beginning by every gateway replica. */
export const CredentialsTopic = defineTopic({ name: 'efs.auth.credentials', kind: 'state', partitions: 3, compacted: true, schema: CredentialSchema });
