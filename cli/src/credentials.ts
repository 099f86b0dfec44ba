import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CredentialsTopic } from '@efs/contracts';
import { commonEnv, parseConfig } from '@efs/config';
import { Outbox, type Publisher } from '@efs/db';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate, createTransport } from '@efs/runtime';
import { AUTH_SCHEMA, gateway, KeyEncryption, KnexCredentialStore, revokeSigningKey, rotateSigningKey } from '@efs/gateway';
import { parseArgsOptions, type CommandSpec } from './commandLine.ts';

const name = { type: 'string', value: 'NAME', help: 'its display name when it is new (default: its id)' } as const;
const label = { type: 'string', value: 'LABEL', help: 'a note kept with the credential (which system uses it)' } as const;

type CredentialKind = 'client-token' | 'utility-key';

/** What sets the two kinds of credential apart: who owns one, what it is called, the store's calls for it. */
interface KindOf {
  /** The owner, as create's option names it (`--integrator ID`). */
  readonly owner: 'integrator' | 'utility';
  /** What create makes and revoke revokes, for their summaries; the short name, for the owner's help. */
  readonly created: string;
  readonly revoked: string;
  readonly noun: string;
  /** Revoke's positional. */
  readonly idUsage: string;
  create(store: KnexCredentialStore, owner: string, name: string, label: string): Promise<{ id: string; token: string }>;
  revoke(store: KnexCredentialStore, id: string): Promise<boolean>;
}

const kinds: Record<CredentialKind, KindOf> = {
  'client-token': {
    owner: 'integrator',
    created: 'a client token',
    revoked: 'a client token',
    noun: 'token',
    idUsage: 'TOKEN_ID',
    create: async (store, owner, name, label) => (await store.ensureIntegrator(owner, name), store.createClientToken(owner, label)),
    revoke: (store, id) => store.revokeClientToken(id),
  },
  'utility-key': {
    owner: 'utility',
    created: 'an API key',
    revoked: 'a utility API key',
    noun: 'key',
    idUsage: 'KEY_ID',
    create: async (store, owner, name, label) => (await store.ensureUtility(owner, name), store.createUtilityKey(owner, label)),
    revoke: (store, id) => store.revokeUtilityKey(id),
  },
};

/** `efs <kind> create` and `efs <kind> revoke`. */
function specsOf(kind: CredentialKind): Record<'create' | 'revoke', CommandSpec> {
  const k = kinds[kind];
  return {
    create: {
      name: `${kind} create`,
      summary: `Creates ${k.created} for the ${k.owner} (and the ${k.owner} when it is new); prints it once, only its hash is kept.`,
      options: { [k.owner]: { type: 'string', value: 'ID', required: true, help: `the ${k.owner} the ${k.noun} belongs to` }, name, label },
    },
    revoke: {
      name: `${kind} revoke`,
      summary: `Revokes ${k.revoked}; every gateway refuses it within seconds.`,
      positionals: { usage: k.idUsage, min: 1, max: 1 },
      options: {},
    },
  };
}

export const credentialSpecs: Record<CredentialKind, Record<'create' | 'revoke', CommandSpec>> = { 'client-token': specsOf('client-token'), 'utility-key': specsOf('utility-key') };

export const rotateSigningKeySpec = {
  name: 'signing-key rotate',
  summary: 'Adds a new site-token and portal-session signing key, which signs once every gateway has loaded it; deletes keys whose tokens have all expired.',
  options: {},
  details: ['Needs SIGNING_KEY_ENCRYPTION_KEY (it seals the keys kept in the auth schema); with SITE_TOKEN_SIGNING_KEYS the keys come from the environment instead.'],
} as const satisfies CommandSpec;

export const revokeSigningKeySpec = {
  name: 'signing-key revoke',
  summary: 'Retires a signing key at once: every gateway refuses the site tokens and portal sessions it signed within SIGNING_KEYS_REFRESH_MS (5 s); a new key takes over when it was the one signing.',
  positionals: { usage: 'KID', min: 1, max: 1 },
  options: {},
  details: ['The kid is in every token it signed (its claims) and in auth.signing_keys. Needs SIGNING_KEY_ENCRYPTION_KEY; with SITE_TOKEN_SIGNING_KEYS, remove the key there and restart the gateways instead.'],
} as const satisfies CommandSpec;

/** Without a broker the CLI cannot reach the gateways: it leaves the change in the outbox for a running gateway's relay. */
export const noBroker: Publisher = {
  async publish() {
    throw new Error('no broker configured');
  },
};

export interface CliIo {
  out(line: string): void;
}

/**
 * `efs client-token create|revoke` and `efs utility-key create|revoke`: the change and its
 * efs.auth.credentials message commit together in the auth schema. With KAFKA_BROKERS set the CLI
 * publishes the message itself; otherwise (and also as a fallback) the outbox relay of any running
 * gateway publishes it within a second. Every gateway replica consumes the topic, so a revocation
 * takes effect everywhere within seconds. Returns the process exit code.
 */
export async function credentialCommand(kind: CredentialKind, sub: string | undefined, args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const common = parseConfig(z.object(commonEnv), env);
  const logger = createLogger({ name: 'efs-cli', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, [gateway], logger);
  const transport = common.KAFKA_BROKERS ? createTransport(common, logger) : undefined;
  const outbox = new Outbox({ knex: db.knex, schema: AUTH_SCHEMA, publisher: transport ?? noBroker, logger, topics: [CredentialsTopic] });
  const store = new KnexCredentialStore(db.knex, AUTH_SCHEMA, outbox);
  try {
    let code = 0;
    const k = kinds[kind];
    if (sub === 'create') {
      const values = parseArgs({ args, options: parseArgsOptions(credentialSpecs[kind].create) }).values;
      const [owner, name, label] = [values[k.owner], values.name, values.label].map((v) => (typeof v === 'string' ? v : undefined));
      if (!owner) throw new Error(`--${k.owner} is required`);
      const created = await k.create(store, owner, name ?? owner, label ?? '');
      io.out(`id: ${created.id}\ntoken: ${created.token}\n(shown once; only its hash is stored)`);
    } else if (sub === 'revoke') {
      const id = parseArgs({ args, allowPositionals: true, options: parseArgsOptions(credentialSpecs[kind].revoke) }).positionals[0];
      if (!id) throw new Error('the id to revoke is required');
      const ok = await k.revoke(store, id);
      io.out(ok ? `revoked ${id}` : `no active ${kind} ${id}`);
      if (!ok) code = 1;
    } else {
      throw new Error(`unknown ${kind} command ${sub ?? ''}`);
    }
    if (transport) {
      try {
        await transport.start();
        await outbox.flush();
        io.out('published to efs.auth.credentials');
      } catch (err) {
        io.out(`could not publish (${(err as Error).message}); a running gateway publishes the change within a second`);
      }
    } else {
      io.out('a running gateway publishes the change to efs.auth.credentials within a second');
    }
    return code;
  } finally {
    await transport?.stop().catch(() => undefined);
    await db.close();
  }
}

/**
 * `efs signing-key rotate`: a new site-token/portal-session signing key in the auth schema (sealed
 * with SIGNING_KEY_ENCRYPTION_KEY), which starts signing after every replica has loaded it; keys
 * whose tokens have all expired are deleted. (With SITE_TOKEN_SIGNING_KEYS the keys come from the
 * environment instead: see config.ts.)
 */
export async function rotateSigningKeyCommand(env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const common = parseConfig(z.object(commonEnv), env);
  const config = gateway.config(env);
  if (!config.SIGNING_KEY_ENCRYPTION_KEY) throw new Error('SIGNING_KEY_ENCRYPTION_KEY is required: it seals the signing keys kept in the database');
  const encryption = KeyEncryption.parse(config.SIGNING_KEY_ENCRYPTION_KEY);
  const logger = createLogger({ name: 'efs-cli', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, [gateway], logger);
  try {
    const r = await rotateSigningKey(db.knex, AUTH_SCHEMA, {
      encryption,
      activationDelayMs: 2 * config.SIGNING_KEYS_REFRESH_MS + 5_000,
      keepMs: Math.max(config.SITE_TOKEN_TTL_S, config.PORTAL_SESSION_TTL_S) * 1000 + 5 * 60_000,
    });
    io.out(`new signing key ${r.kid} signs from ${r.activates_at.toISOString()}${r.deleted.length ? `; deleted expired keys ${r.deleted.join(', ')}` : ''}`);
    return 0;
  } finally {
    await db.close();
  }
}

/**
 * `efs signing-key revoke KID`: retires a signing key at once. Every gateway replica drops it at
 * its next key refresh (SIGNING_KEYS_REFRESH_MS, 5 s by default), so every site token and portal
 * session it signed is refused from then on; a new key takes over signing when it was the one
 * signing. Exit 1 for a kid the auth schema does not hold.
 */
export async function revokeSigningKeyCommand(kid: string, env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const common = parseConfig(z.object(commonEnv), env);
  const config = gateway.config(env);
  if (config.SITE_TOKEN_SIGNING_KEYS) throw new Error('the signing keys come from SITE_TOKEN_SIGNING_KEYS: remove the key there and restart the gateways');
  const encryption = KeyEncryption.parse(config.SIGNING_KEY_ENCRYPTION_KEY ?? '');
  const logger = createLogger({ name: 'efs-cli', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, [gateway], logger);
  try {
    const r = await revokeSigningKey(db.knex, AUTH_SCHEMA, kid, { encryption });
    if (!r.revoked) {
      io.out(`no signing key ${kid} to revoke (unknown, or revoked already)`);
      return 1;
    }
    const within = `${Math.ceil(config.SIGNING_KEYS_REFRESH_MS / 1000)} s`;
    io.out(`signing key ${kid} revoked: every gateway refuses the tokens it signed within ${within}${r.replacement ? `; new signing key ${r.replacement} signs from now` : ''}`);
    return 0;
  } finally {
    await db.close();
  }
}
