import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate } from '@efs/runtime';
import { AUTH_SCHEMA, gateway, KeyEncryption, KnexPortalOidcStore, OidcSettingsInput, STANDALONE_PATHS, type OidcSettings } from '@efs/gateway';
import { parseArgsOptions, usageLine, type CommandSpec, type OptionSpec } from './commandLine.ts';
import type { CliIo } from './credentials.ts';

const integrator = { type: 'string', value: 'ID', required: true, help: 'the integrator whose standalone portal it is' } as const;

export const portalOidcSpecs = {
  set: {
    name: 'portal oidc set',
    summary: "Sets the integrator's standalone portal: its OpenID provider, client and host names (replacing what was set); prints the result.",
    options: {
      integrator,
      issuer: { type: 'string', value: 'URL', required: true, help: "the provider's issuer (https; discovery reads ISSUER/.well-known/openid-configuration)" },
      'client-id': { type: 'string', value: 'ID', required: true, help: 'the client id registered at the provider' },
      'client-secret-file': { type: 'string', value: 'FILE', required: true, help: 'a file holding the client secret (stored sealed with SIGNING_KEY_ENCRYPTION_KEY)' },
      'site-claim': { type: 'string', value: 'CLAIM', default: 'site_id', help: "the ID token claim with the user's site id, or an array of site ids" },
      scope: { type: 'string', value: 'SCOPE', multiple: true, help: 'a scope to ask for besides openid (repeatable)' },
      host: { type: 'string', value: 'NAME', required: true, multiple: true, help: 'a host name the portal answers on, e.g. energy.acme.com (repeatable)' },
    },
    details: ['Register https://HOST/auth/oidc/callback as a redirect URI and https://HOST/auth/logout as a post-logout redirect URI at the provider.'],
  },
  show: { name: 'portal oidc show', summary: "Prints the integrator's standalone portal settings (never the client secret).", options: { integrator } },
  unset: { name: 'portal oidc unset', summary: "Removes the integrator's standalone portal: its host names answer 404 from then on.", options: { integrator } },
} as const satisfies Record<string, CommandSpec>;

export const PORTAL_OIDC_USAGE = Object.values(portalOidcSpecs).map(usageLine).join('\n');
const isSub = (sub: string | undefined): sub is keyof typeof portalOidcSpecs => sub !== undefined && Object.hasOwn(portalOidcSpecs, sub);

/** What `show` and `set` print: the settings, and the addresses to register at the provider. */
function describe(s: OidcSettings): string {
  const { updated_at, ...rest } = s;
  return JSON.stringify(
    {
      ...rest,
      client_secret: '(stored sealed; not shown)',
      redirect_uris: s.hosts.map((h) => `https://${h}${STANDALONE_PATHS.callback}`),
      post_logout_redirect_uris: s.hosts.map((h) => `https://${h}${STANDALONE_PATHS.logout}`),
      updated_at: updated_at.toISOString(),
    },
    null,
    2,
  );
}

/**
 * `efs portal oidc set|show|unset`: an integrator's standalone portal in the auth schema. Every
 * gateway reads it through a cache of PORTAL_OIDC_CACHE_MS, so a change applies within seconds on
 * every replica without a restart. Returns the exit code.
 */
export async function portalOidcCommand(sub: string | undefined, args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  if (!isSub(sub)) throw new Error(`unknown portal oidc command ${sub ?? ''}\n${PORTAL_OIDC_USAGE}`);
  const spec = portalOidcSpecs[sub];
  const { values } = parseArgs({ args, options: parseArgsOptions<Readonly<Record<string, OptionSpec>>>(spec) });
  const integratorId = values.integrator;
  if (typeof integratorId !== 'string' || integratorId === '') throw new Error('--integrator is required');

  // Everything is checked before the database is opened.
  let input: z.input<typeof OidcSettingsInput> | undefined;
  if (sub === 'set') {
    const file = values['client-secret-file'] as string;
    let secret: string;
    try {
      secret = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new Error(`--client-secret-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
    input = {
      issuer: values.issuer as string,
      client_id: values['client-id'] as string,
      client_secret: secret,
      site_claim: values['site-claim'] as string,
      scopes: (values.scope as unknown as string[] | undefined) ?? [],
      hosts: values.host as unknown as string[],
    };
    const checked = OidcSettingsInput.safeParse(input);
    if (!checked.success) {
      const flag: Record<string, string> = { issuer: '--issuer', client_id: '--client-id', client_secret: '--client-secret-file', site_claim: '--site-claim', scopes: '--scope', hosts: '--host' };
      throw new Error(checked.error.issues.map((i) => `${flag[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('\n'));
    }
  }

  const common = parseConfig(z.object(commonEnv), env);
  const config = gateway.config(env);
  const encryption = KeyEncryption.parse(config.SIGNING_KEY_ENCRYPTION_KEY ?? '');
  const db = await createDatabaseAndMigrate(common, [gateway], createLogger({ name: 'efs-cli', level: 'warn' }));
  const store = new KnexPortalOidcStore(db.knex, AUTH_SCHEMA, encryption);
  try {
    if (sub === 'set') {
      io.out(describe(await store.set(integratorId, input!)));
    } else if (sub === 'show') {
      const s = await store.get(integratorId);
      if (!s) throw new Error(`${integratorId} has no standalone portal (efs portal oidc set)`);
      io.out(describe(s));
    } else {
      const removed = await store.unset(integratorId);
      io.out(removed ? `${integratorId}: standalone portal removed; its host names answer 404 within seconds` : `${integratorId} had no standalone portal`);
    }
    return 0;
  } finally {
    await db.close();
  }
}
