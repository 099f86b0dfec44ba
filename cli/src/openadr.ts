import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CredentialsTopic } from '@efs/contracts';
import { commonEnv, parseConfig } from '@efs/config';
import { Outbox } from '@efs/db';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate } from '@efs/runtime';
import { AUTH_SCHEMA, gateway, KnexCredentialStore, KnexOpenAdrClientStore, type OpenAdrClient } from '@efs/gateway';
import { parseArgsOptions, type CommandSpec } from './commandLine.ts';
import { noBroker, type CliIo } from './credentials.ts';

export const openAdrClientSpecs = {
  create: {
    name: 'openadr client create',
    summary: "Creates an OpenADR 3 client: a utility's business-logic client (BL) or an integrator's VEN client; prints its id and secret once, only the secret's hash is kept.",
    options: {
      role: { type: 'string', value: 'BL|VEN', required: true, help: 'BL (a utility: reads and writes its programs and events) or VEN (an integrator: reads what targets it)' },
      utility: { type: 'string', value: 'ID', help: 'the utility of a BL client (created when it is new)' },
      integrator: { type: 'string', value: 'ID', help: 'the integrator of a VEN client (created when it is new)' },
      name: { type: 'string', value: 'NAME', help: 'the display name of a new utility or integrator (default: its id)' },
      label: { type: 'string', value: 'LABEL', help: 'a note kept with the client (which system uses it)' },
    },
    details: ['The client gets access tokens from {utility_base_url}/openadr3/3.1/auth/token (client credentials grant).'],
  },
  list: {
    name: 'openadr client list',
    summary: 'Lists the OpenADR 3 clients: id, role, owner, label, created and revoked times (never secrets).',
    options: {},
  },
  revoke: {
    name: 'openadr client revoke',
    summary: 'Revokes an OpenADR 3 client: its secret and every access token it holds are refused from now on.',
    positionals: { usage: 'CLIENT_ID', min: 1, max: 1 },
    options: {},
  },
} as const satisfies Record<'create' | 'list' | 'revoke', CommandSpec>;

const ownerOf = (c: OpenAdrClient) => (c.role === 'BL' ? `utility ${c.utility_id ?? ''}` : `integrator ${c.integrator_id ?? ''}`);

/**
 * `efs openadr client create|list|revoke`: OpenADR 3 clients in the gateway's auth schema. Tokens
 * are looked up per request, so a revocation holds on every gateway at once. Returns the exit code.
 */
export async function openAdrClientCommand(sub: 'create' | 'list' | 'revoke', args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const spec = openAdrClientSpecs[sub];
  const { values, positionals } = parseArgs({ args, allowPositionals: sub === 'revoke', options: parseArgsOptions(spec) });
  const common = parseConfig(z.object(commonEnv), env);
  const logger = createLogger({ name: 'efs-cli', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, [gateway], logger);
  const clients = new KnexOpenAdrClientStore(db.knex, AUTH_SCHEMA);
  try {
    if (sub === 'list') {
      for (const c of await clients.list()) io.out(`${c.id}  ${c.role}  ${ownerOf(c)}  created ${c.created_at}${c.revoked_at ? `  revoked ${c.revoked_at}` : ''}${c.label ? `  ${c.label}` : ''}`);
      return 0;
    }
    if (sub === 'revoke') {
      const id = positionals[0]!;
      const ok = await clients.revoke(id);
      io.out(ok ? `revoked ${id}: its secret and tokens are refused from now on` : `no active OpenADR client ${id}`);
      return ok ? 0 : 1;
    }
    const v = values as { role?: string; utility?: string; integrator?: string; name?: string; label?: string };
    const owners = new KnexCredentialStore(db.knex, AUTH_SCHEMA, new Outbox({ knex: db.knex, schema: AUTH_SCHEMA, publisher: noBroker, logger, topics: [CredentialsTopic] }));
    let created: Awaited<ReturnType<KnexOpenAdrClientStore['create']>>;
    if (v.role === 'BL') {
      if (!v.utility || v.integrator) throw new Error('a BL client belongs to a utility: give --utility and no --integrator');
      await owners.ensureUtility(v.utility, v.name ?? v.utility);
      created = await clients.create({ role: 'BL', utility_id: v.utility, label: v.label ?? '' });
    } else if (v.role === 'VEN') {
      if (!v.integrator || v.utility) throw new Error('a VEN client belongs to an integrator: give --integrator and no --utility');
      await owners.ensureIntegrator(v.integrator, v.name ?? v.integrator);
      created = await clients.create({ role: 'VEN', integrator_id: v.integrator, label: v.label ?? '' });
    } else {
      throw new Error(`--role is BL or VEN, not ${v.role ?? ''}`);
    }
    io.out(`client_id: ${created.client.id}\nclient_secret: ${created.secret}\n(${created.client.role} client of ${ownerOf(created.client)}; the secret is shown once, only its hash is stored)`);
    return 0;
  } finally {
    await db.close();
  }
}
