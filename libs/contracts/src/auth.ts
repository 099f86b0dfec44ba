import { avroRecord, enumOf, enumType, recordType, text, timestamp } from './fields.ts';
import { defineTopic } from './topic.ts';

/**
 * A long-lived credential (client token or utility API key) as every gateway replica keeps it in
 * memory, keyed by credential id on a compacted topic. Only the SHA-256 of the secret travels;
 * `revoked_at` set means the credential stops working everywhere once this message is consumed.
 */
export const CredentialSchema = avroRecord(
  recordType('Credential', 'efs.auth', {
    id: text(),
    kind: enumOf(enumType('CredentialKind', 'efs.auth', ['CLIENT_TOKEN', 'UTILITY_KEY'])),
    owner_id: text({ doc: 'integrator id of a client token, utility id of a utility key' }),
    token_hash: text({ doc: 'hex SHA-256 of the secret' }),
    created_at: timestamp(),
    revoked_at: timestamp({ nullable: true }),
  }),
);

/** Published by the gateway's outbox (auth schema); consumed from the beginning by every gateway replica. */
export const CredentialsTopic = defineTopic({ name: 'efs.auth.credentials', kind: 'state', partitions: 3, compacted: true, schema: CredentialSchema });
