import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { refusedDestination, type DestinationRules } from '../domain/destination.ts';

/** Most of an endpoint's answer that is read; the rest is dropped with the connection. */
export const RESPONSE_READ_LIMIT = 64 * 1024;
/** How long a resolved and checked name is reused before it is resolved again. */
const RESOLVE_TTL_MS = 10_000;
/** An endpoint's connection pool unused this long, with no connection left, is closed (its subscription may be gone). */
const AGENT_IDLE_MS = 5 * 60_000;

export type Resolution = { address: string; family: number } | { refused: string };

export interface SendResult {
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * The only way out to a webhook endpoint. The host is resolved, every address it resolves to is
 * checked against the destination rules, and the connection is made to the address checked
 * (the socket's lookup answers it), so a name that resolves elsewhere a moment later (DNS
 * rebinding) cannot redirect it. Redirects are not followed (a 3xx is a failure), an attempt
 * lasts at most `timeoutMs`, and at most RESPONSE_READ_LIMIT bytes of the answer are read.
 * Each endpoint has its own keep-alive connections.
 */
export class EndpointClient {
  private readonly agents = new Map<string, { agent: http.Agent; usedAt: number }>();
  private agentsSweptAt = Date.now();
  private readonly resolved = new Map<string, { at: number; addresses: { address: string; family: number }[] }>();

  private readonly opts: { rules: DestinationRules; timeoutMs: number; maxSocketsPerEndpoint: number };

  constructor(opts: { rules: DestinationRules; timeoutMs: number; maxSocketsPerEndpoint: number }) {
    this.opts = opts;
  }

  /**
   * The address a request to `url` connects to, or why it may not. Only the DNS answer is cached
   * (by host): the verdict depends on the whole URL (its scheme, its credentials), so it is made
   * again for every URL and one URL's refusal never stands for another's. The lookup takes at most
   * `timeoutMs`.
   */
  async resolve(url: URL, timeoutMs = this.opts.timeoutMs): Promise<Resolution> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const cached = this.resolved.get(host);
    let addresses = cached && Date.now() - cached.at < RESOLVE_TTL_MS ? cached.addresses : undefined;
    if (!addresses) {
      try {
        addresses = await withinMs(lookup(host, { all: true, verbatim: true }), timeoutMs);
      } catch {
        return { refused: `${host} does not resolve` };
      }
      if (this.resolved.size > 10_000) this.resolved.clear();
      this.resolved.set(host, { at: Date.now(), addresses });
    }
    const why = refusedDestination(url, addresses.map((a) => a.address), this.opts.rules);
    return why ? { refused: why } : addresses[0]!;
  }

  /** One POST of `body` to the endpoint `endpointKey` (its subscription) at `url`. */
  async send(endpointKey: string, url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const u = new URL(url);
    // The attempt's time limit covers the name's lookup too.
    const target = await this.resolve(u, this.opts.timeoutMs);
    if ('refused' in target) return { responseStatus: null, error: `destination refused: ${target.refused}`, durationMs: elapsed() };
    const pinned: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
      else callback(null, target.address, target.family);
    };
    return new Promise<SendResult>((resolve) => {
      let done = false;
      const finish = (responseStatus: number | null, error: string | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ responseStatus, error, durationMs: elapsed() });
      };
      const req = (u.protocol === 'https:' ? https : http).request(u, {
        method: 'POST',
        agent: this.agentFor(endpointKey, u.protocol),
        lookup: pinned,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'efs-webhooks/1' },
      });
      const timer = setTimeout(() => {
        req.destroy();
        finish(null, `no answer within ${this.opts.timeoutMs} ms`);
      }, Math.max(1, this.opts.timeoutMs - elapsed()));
      req.on('response', (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > RESPONSE_READ_LIMIT) {
            res.destroy();
            finish(res.statusCode ?? null, null);
          }
        });
        res.on('end', () => finish(res.statusCode ?? null, null));
        res.on('error', () => finish(res.statusCode ?? null, null));
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish(null, `connection failed: ${err.code ?? err.message}`));
      req.end(body);
    });
  }

  close(): void {
    for (const a of this.agents.values()) a.agent.destroy();
    this.agents.clear();
  }

  private agentFor(endpointKey: string, protocol: string): http.Agent {
    const now = Date.now();
    if (now - this.agentsSweptAt > AGENT_IDLE_MS) this.closeIdleAgents(now);
    const key = `${protocol}${endpointKey}`;
    let entry = this.agents.get(key);
    if (!entry) {
      const options = { keepAlive: true, maxSockets: this.opts.maxSocketsPerEndpoint, timeout: this.opts.timeoutMs };
      entry = { agent: protocol === 'https:' ? new https.Agent(options) : new http.Agent(options), usedAt: now };
      this.agents.set(key, entry);
    }
    entry.usedAt = now;
    return entry.agent;
  }

  /** Pools of endpoints no longer sent to (deleted, disabled, or quiet): without them the map would grow with every endpoint ever seen. */
  private closeIdleAgents(now: number): void {
    this.agentsSweptAt = now;
    for (const [key, { agent, usedAt }] of this.agents) {
      const busy = Object.keys(agent.sockets).length > 0 || Object.keys(agent.requests).length > 0;
      if (!busy && now - usedAt > AGENT_IDLE_MS) {
        agent.destroy();
        this.agents.delete(key);
      }
    }
  }

  /** How many endpoints have a connection pool (for tests and metrics). */
  get pools(): number {
    return this.agents.size;
  }
}

/** `p`, or a rejection once `ms` have passed. */
async function withinMs<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
