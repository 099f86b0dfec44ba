import { z } from 'zod';
import { SchemaStore, type KeyEncryption, type Knex } from '@efs/db';
import { UnknownIntegratorError } from './portalSettingsStore.ts';

/** 127.0.0.0/8, ::1 and localhost (with its subdomains): where plain http is allowed (development, tests). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** An issuer: https, or plain http on a loopback address only (decisions.md); no query or fragment. */
const Issuer = z
  .string()
  .max(2048)
  .transform((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'an https URL such as https://login.acme.com' });
      return z.NEVER;
    }
    if (u.search || u.hash || u.username || u.password) {
      ctx.addIssue({ code: 'custom', message: 'an issuer URL has no query, fragment or credentials' });
      return z.NEVER;
    }
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) {
      ctx.addIssue({ code: 'custom', message: 'an https URL (plain http only on a loopback address)' });
      return z.NEVER;
    }
    // Kept as given (the ID token's `iss` must equal it), but for a trailing slash on a bare origin.
    return u.pathname === '/' && !v.endsWith('/') ? u.origin : v;
  });

/** A DNS host name, lower case, without a port (the portal matches the Host header without it). */
const HostName = z
  .string()
  .transform((v) => v.trim().toLowerCase().replace(/\.$/, ''))
  .pipe(z.string().max(253).regex(/^(?=.*[a-z])[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, 'a host name such as energy.acme.com (no scheme, port or path)'));

/** RFC 6749 scope tokens; `openid` is always among them. */
const Scopes = z
  .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/, 'scope names of printable characters without spaces, quotes or backslashes'))
  .max(20)
  .transform((s) => [...new Set(['openid', ...s])]);

/** What `efs portal oidc set` stores for an integrator (the secret comes from a file, never the command line). */
export const OidcSettingsInput = z.strictObject({
  issuer: Issuer,
  client_id: z.string().min(1).max(255).regex(/^[\x20-\x7E]+$/, 'printable ASCII'),
  client_secret: z.string().min(1).max(4096).regex(/^[\x20-\x7E]+$/, 'printable ASCII on one line'),
  /** The ID token claim naming the user's site (a string) or sites (an array of strings). */
  site_claim: z.string().regex(/^[A-Za-z0-9_.:/-]{1,100}$/, 'a claim name such as site_id'),
  scopes: Scopes,
  hosts: z.array(HostName).min(1).max(20),
});
export type OidcSettingsInputType = z.input<typeof OidcSettingsInput>;

/** An integrator's standalone portal as configured, without its secret (what `show` prints). */
export interface OidcSettings {
  integrator_id: string;
  issuer: string;
  client_id: string;
  site_claim: string;
  scopes: string[];
  hosts: string[];
  updated_at: Date;
}

/** And the client secret, opened: what the portal signs users in with. */
export interface OidcClientSettings extends OidcSettings {
  client_secret: string;
}

export class HostTakenError extends Error {
  constructor(host: string, integratorId: string) {
    super(`the host name ${host} is already the portal of integrator ${integratorId}`);
    this.name = 'HostTakenError';
  }
}

interface Row {
  integrator_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  site_claim: string;
  scopes: string[];
  updated_at: Date | string;
}

/** The sealed secret names its row, so a secret copied to another integrator does not open. */
const associatedData = (schema: string, integratorId: string) => `${schema}.portal_oidc:${integratorId}`;

/**
 * `auth.portal_oidc` and `auth.portal_hosts`: per integrator its OpenID provider, its client
 * (the secret sealed with the key-encryption key, like the signing keys) and its host names.
 */
export class KnexPortalOidcStore extends SchemaStore {
  private readonly encryption: KeyEncryption;

  constructor(knex: Knex, schema: string, encryption: KeyEncryption) {
    super(knex, schema);
    this.encryption = encryption;
  }

  /** Replaces the integrator's settings; a host name of another integrator is refused and nothing changes. */
  async set(integratorId: string, input: OidcSettingsInputType): Promise<OidcSettings> {
    const s = OidcSettingsInput.parse(input);
    await this.knex.transaction(async (trx) => {
      if (!(await this.table('integrators', trx).where({ id: integratorId }).first('id'))) throw new UnknownIntegratorError(integratorId);
      const taken = (await this.table('portal_hosts', trx).whereIn('host', s.hosts).whereNot({ integrator_id: integratorId }).first('host', 'integrator_id')) as { host: string; integrator_id: string } | undefined;
      if (taken) throw new HostTakenError(taken.host, taken.integrator_id);
      const row = {
        integrator_id: integratorId,
        issuer: s.issuer,
        client_id: s.client_id,
        client_secret: this.encryption.seal(Buffer.from(s.client_secret, 'utf8'), associatedData(this.schema, integratorId)),
        site_claim: s.site_claim,
        scopes: JSON.stringify(s.scopes),
        updated_at: trx.fn.now(),
      };
      await this.table('portal_oidc', trx).insert(row).onConflict('integrator_id').merge();
      await this.table('portal_hosts', trx).where({ integrator_id: integratorId }).delete();
      // A host taken by another integrator since the check above fails here on the primary key.
      await this.table('portal_hosts', trx).insert(s.hosts.map((host) => ({ host, integrator_id: integratorId })));
    });
    return (await this.get(integratorId))!;
  }

  async get(integratorId: string): Promise<OidcSettings | undefined> {
    const row = (await this.table('portal_oidc').where({ integrator_id: integratorId }).first()) as Row | undefined;
    return row ? this.settingsOf(row) : undefined;
  }

  /** Whether there was anything to remove. */
  async unset(integratorId: string): Promise<boolean> {
    return (await this.table('portal_oidc').where({ integrator_id: integratorId }).delete()) > 0;
  }

  /**
   * Seals with the current key-encryption key every client secret sealed by an older one (a KEK
   * rotation), as the signing keys are at start; answers the integrators whose secret it re-sealed.
   * Each update names the value it replaces, so replicas starting together never undo each other.
   */
  async resealSecrets(): Promise<string[]> {
    const rows = (await this.table('portal_oidc').select('integrator_id', 'client_secret')) as Pick<Row, 'integrator_id' | 'client_secret'>[];
    const done: string[] = [];
    for (const r of rows) {
      if (this.encryption.isCurrent(r.client_secret)) continue;
      const ad = associatedData(this.schema, r.integrator_id);
      const sealed = this.encryption.seal(this.encryption.open(r.client_secret, ad), ad);
      if ((await this.table('portal_oidc').where({ integrator_id: r.integrator_id, client_secret: r.client_secret }).update({ client_secret: sealed })) > 0) done.push(r.integrator_id);
    }
    return done;
  }

  /** The settings of the integrator whose portal answers on this host name, secret opened. */
  async forHost(host: string): Promise<OidcClientSettings | undefined> {
    const row = (await this.knex
      .withSchema(this.schema)
      .from('portal_hosts as h')
      .join('portal_oidc as o', 'o.integrator_id', 'h.integrator_id')
      .where('h.host', host.toLowerCase())
      .first('o.*')) as Row | undefined;
    if (!row) return undefined;
    const settings = await this.settingsOf(row);
    const client_secret = this.encryption.open(row.client_secret, associatedData(this.schema, row.integrator_id)).toString('utf8');
    return { ...settings, client_secret };
  }

  private async settingsOf(row: Row): Promise<OidcSettings> {
    const hosts = (await this.table('portal_hosts').where({ integrator_id: row.integrator_id }).orderBy('host').pluck('host')) as string[];
    return {
      integrator_id: row.integrator_id,
      issuer: row.issuer,
      client_id: row.client_id,
      site_claim: row.site_claim,
      scopes: row.scopes,
      hosts,
      updated_at: new Date(row.updated_at),
    };
  }
}
