/**
 * The bare reference of bench/webhookDelivery.ts, a process of its own: the same number of
 * signed POSTs straight to the receiver, at the same concurrency per endpoint, with no queue, no
 * database and no broker. What the HTTP path alone costs on this machine.
 *
 *   node bench/webhookBareSender.ts URL COUNT CONCURRENCY   (prints one JSON line)
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';

const [url, countText, concurrencyText] = process.argv.slice(2);
const count = Number(countText);
const concurrency = Number(concurrencyText);
const key = randomBytes(32);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url!);

const send = (i: number) =>
  new Promise<void>((resolve, reject) => {
    const id = `msg_bare_${i}`;
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ event_type: 'command.created', event_object: { id: `c${i}`, object_type: 'command' }, timestamp: new Date().toISOString() });
    const signature = 'v1,' + createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
    const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signature } }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end(body);
  });

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < count; i = next++) await send(i);
  }),
);
const ms = performance.now() - started;
const cpu = process.cpuUsage();
console.log(JSON.stringify({ sent: count, ms, cpuMs: (cpu.user + cpu.system) / 1000 }));
agent.destroy();
