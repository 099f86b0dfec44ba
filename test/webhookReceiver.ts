import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '@efs/testing';

/** One request an endpoint received, as a receiver sees it. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What an endpoint answers: a status, or nothing at all (it hangs until the sender gives up). */
export type Answer = number | 'hang';

/**
 * A real receiver on loopback, with one endpoint per path: each records what it received and
 * answers what its script says (a list of answers, the last repeated; 200 by default).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Answer[]>();
  private server!: Server;
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0]!;
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const script = this.scripts.get(path) ?? [];
        const answer = script.length > 1 ? script.shift()! : (script[0] ?? 200);
        if (answer === 'hang') return;
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A new endpoint's URL; its answers follow `script`. */
  endpoint(name: string, script: Answer[] = [200]): string {
    this.scripts.set(`/${name}`, [...script]);
    return `${this.base}/${name}`;
  }

  answer(name: string, script: Answer[]): void {
    this.scripts.set(`/${name}`, [...script]);
  }

  at(name: string): Received[] {
    return this.received.filter((r) => r.path === `/${name}`);
  }

  /** The messages an endpoint received, parsed, each checked with the Standard Webhooks reference verifier. */
  verified(name: string, secret: string): (Received & { message: { event_type: string; event_object: any; timestamp: string } })[] {
    const wh = new Webhook(secret);
    return this.at(name).map((r) => ({ ...r, message: wh.verify(r.body, r.headers as Record<string, string>) as any }));
  }

  /** Waits until the endpoint has received messages that `match` accepts, and answers them. */
  async waitFor(name: string, match: (r: Received[]) => boolean, what: string): Promise<Received[]> {
    return waitFor(() => (match(this.at(name)) ? this.at(name) : undefined), { what, timeoutMs: 20_000 });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const kindsOf = (rs: Received[]) => rs.map((r) => (JSON.parse(r.body) as { event_type: string }).event_type);
export const parsed = (r: Received) => JSON.parse(r.body) as { event_type: string; event_object: any; timestamp: string };
