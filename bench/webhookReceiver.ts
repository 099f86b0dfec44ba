/**
 * The receiving end of bench/webhookDelivery.ts, a process of its own: answers every POST 204,
 * counts the distinct webhook-ids, and checks one signature in 500 with the Standard Webhooks
 * reference verifier (`GET /stats` answers the counts).
 *
 *   PORT=… WEBHOOK_SECRET=whsec_… node bench/webhookReceiver.ts   (the secret may be set later: POST /secret)
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const ids = new Set<string>();
let received = 0;
let checked = 0;
let badSignatures = 0;
let verifier: Webhook | undefined = process.env.WEBHOOK_SECRET ? new Webhook(process.env.WEBHOOK_SECRET) : undefined;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'GET' && req.url === '/stats') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received, unique: ids.size, checked, badSignatures }));
    if (req.url === '/secret') {
      verifier = new Webhook(body);
      return void res.writeHead(204).end();
    }
    received++;
    const id = String(req.headers['webhook-id']);
    ids.add(id);
    if (verifier && received % 500 === 1) {
      checked++;
      try {
        verifier.verify(body, req.headers as Record<string, string>);
      } catch {
        badSignatures++;
      }
    }
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`listening ${JSON.stringify(server.address())}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
