import * as oidc from 'openid-client';
import { isLoopbackHost, type KnexPortalOidcStore, type OidcClientSettings } from './oidcSettingsStore.ts';

/** How long a discovered provider's metadata is reused before it is read again. */
const DISCOVERY_TTL_MS = 3600_000;
/** The provider's answers (discovery, token endpoint, keys) are waited for this long. */
export const PROVIDER_TIMEOUT_S = 5;

/** The provider could not be reached or answered no usable metadata. */
export class ProviderUnavailableError extends Error {
  constructor(issuer: string, cause: unknown) {
    super(`the OpenID provider ${issuer} could not be reached`, { cause });
    this.name = 'ProviderUnavailableError';
  }
}

interface Cached<T> {
  value: T;
  at: number;
}

/**
 * The standalone portals' settings by host name, read through a short cache (`cacheMs`), so that
 * `efs portal oidc set|unset` applies on every replica within it without a restart; and each
 * integrator's openid-client configuration (its provider's discovered metadata), reused while its
 * settings are unchanged. A failed discovery is not kept: the next sign-in tries again.
 */
export class OidcClients {
  private readonly store: KnexPortalOidcStore;
  private readonly cacheMs: number;
  private readonly hosts = new Map<string, Cached<OidcClientSettings | undefined>>();
  private readonly configurations = new Map<string, Cached<oidc.Configuration> & { key: string }>();

  constructor(store: KnexPortalOidcStore, cacheMs: number) {
    this.store = store;
    this.cacheMs = cacheMs;
  }

  /** The standalone portal answering on this host name (without port), or undefined. */
  async forHost(host: string): Promise<OidcClientSettings | undefined> {
    const key = host.toLowerCase();
    const cached = this.hosts.get(key);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.value;
    const value = await this.store.forHost(key);
    // Bounded by the number of host names asked about; unknown names are forgotten as they age.
    if (this.hosts.size > 10_000) this.hosts.clear();
    this.hosts.set(key, { value, at: Date.now() });
    return value;
  }

  /** The client of the integrator's provider (discovery from its issuer); throws ProviderUnavailableError. */
  async configuration(s: OidcClientSettings): Promise<oidc.Configuration> {
    const key = JSON.stringify([s.integrator_id, s.issuer, s.client_id, s.client_secret, s.updated_at.getTime()]);
    const cached = this.configurations.get(s.integrator_id);
    if (cached && cached.key === key && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.value;
    const issuer = new URL(s.issuer);
    let configuration: oidc.Configuration;
    try {
      configuration = await oidc.discovery(issuer, s.client_id, s.client_secret, oidc.ClientSecretPost(s.client_secret), {
        timeout: PROVIDER_TIMEOUT_S,
        execute: [
          // The ID token's signature is checked against the provider's JWKS too, not only its
          // claims: openid-client otherwise trusts the TLS connection to the token endpoint for it.
          oidc.enableNonRepudiationChecks,
          // Plain http only for a loopback issuer (the settings refuse any other).
          ...(issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname) ? [oidc.allowInsecureRequests] : []),
        ],
      });
    } catch (err) {
      throw new ProviderUnavailableError(s.issuer, err);
    }
    this.configurations.set(s.integrator_id, { value: configuration, at: Date.now(), key });
    return configuration;
  }
}
