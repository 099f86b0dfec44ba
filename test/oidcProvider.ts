/**
 * A real OpenID provider for the standalone portal's tests: npm `oidc-provider` (its own RSA
 * signing key, its development login and consent pages, RP-initiated logout), reached through a
 * small proxy on its issuer address that can tamper with its token answers or stop answering, as
 * a compromised network or a provider outage would.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** Accounts by login name: the claims their ID token carries besides `sub`. */
export type Accounts = Record<string, Record<string, unknown>>;

export interface TestClient {
  client_id: string;
  client_secret: string;
  /** Origins of the portal (http://acme.localhost:PORT): the callback and post-logout addresses are registered for each. */
  origins: string[];
}

/** What the proxy does to the token endpoint's answers. */
export type TokenMode = 'pass' | 'tamper-signature' | 'expired' | 'unreachable';

export interface TestProvider {
  issuer: string;
  /** Set what the next token answers go through. */
  tokenMode: TokenMode;
  close(): Promise<void>;
}

const b64 = (v: Buffer | string) => Buffer.from(v).toString('base64url');

/** The ID token re-signed with the provider's own key, after `change` (an expiry in the past stays validly signed). */
function resign(idToken: string, key: KeyObject, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload] = idToken.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(claims);
  const signed = `${header}.${b64(JSON.stringify(claims))}`;
  return `${signed}.${b64(sign('sha256', Buffer.from(signed), key))}`;
}

const body = (res: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });

/** Starts the provider on a loopback port behind the proxy, whose address is the issuer. */
export async function startTestProvider(opts: { accounts: Accounts; clients: TestClient[]; claim: string }): Promise<TestProvider> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', use: 'sig', alg: 'RS256' };

  const inner: Server = createServer();
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve));
  const innerPort = (inner.address() as AddressInfo).port;
  const front: Server = createServer();
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: opts.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.origins.map((o) => `${o}/auth/oidc/callback`),
      post_logout_redirect_uris: c.origins.map((o) => `${o}/auth/logout`),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: ['standalone-portal-test-cookie-key'] },
    claims: { openid: ['sub', opts.claim] },
    // The site claim in the ID token itself (the portal reads no userinfo).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    async findAccount(_ctx: unknown, id: string) {
      const claims = opts.accounts[id];
      if (!claims) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
    },
  });
  inner.on('request', provider.callback());

  const t: TestProvider = {
    issuer,
    tokenMode: 'pass',
    async close() {
      front.closeAllConnections();
      inner.closeAllConnections();
      await Promise.all([new Promise((r) => front.close(r)), new Promise((r) => inner.close(r))]);
    },
  };

  // The proxy: everything passes to the provider, but for the token endpoint in the modes that change it.
  front.on('request', (req, res) => {
    const isToken = req.method === 'POST' && (req.url ?? '').startsWith('/token');
    if (isToken && t.tokenMode === 'unreachable') {
      req.socket.destroy();
      return;
    }
    const upstream = request({ host: '127.0.0.1', port: innerPort, method: req.method, path: req.url, headers: req.headers }, async (answer) => {
      if (!isToken || t.tokenMode === 'pass' || answer.statusCode !== 200) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const tokens = JSON.parse((await body(answer)).toString('utf8')) as { id_token: string };
      if (t.tokenMode === 'tamper-signature') {
        // Another site id in the payload, the provider's signature left as it was.
        const [h, p, s] = tokens.id_token.split('.');
        const claims = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>;
        claims[opts.claim] = 'someone-elses-home';
        tokens.id_token = `${h}.${b64(JSON.stringify(claims))}.${s}`;
      } else {
        tokens.id_token = resign(tokens.id_token, privateKey, (c) => {
          c.iat = Math.floor(Date.now() / 1000) - 7200;
          c.exp = Math.floor(Date.now() / 1000) - 3600;
        });
      }
      const text = JSON.stringify(tokens);
      const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
      res.writeHead(200, headers).end(text);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return t;
}
