/**
 * One device cloud of the telemetry benchmark, in its own process (a load generator never runs
 * inside the process it measures): it sends 1,000-item BATTERY batches to the gateway, a few at a
 * time, resends a batch answered 503 or cut off (as a real cloud would), and reports every answer
 * to the parent over IPC. Started by bench/telemetryIngest.ts; not meant to be run by hand.
 */
import { Agent, request } from 'node:http';

interface Config {
  url: string;
  token: string;
  cloud: number;
  devices: string[];
  batch: number;
  durationMs: number;
  inflight: number;
  baseStart: number;
  samplesPerBatch: number;
}

const config = JSON.parse(process.argv[2]!) as Config;
const agent = new Agent({ keepAlive: true, maxSockets: config.inflight });
const target = new URL('/v1/telemetry/BATTERY', config.url);
// The parent going away ends the run (its finally stops the system); never throw into the loop.
const send = (message: unknown) => {
  if (process.connected) process.send!(message);
};
process.on('disconnect', () => process.exit(0));

function post(body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(target, { method: 'POST', agent, headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('no answer in 60 s')));
    req.end(body);
  });
}

/** ISO text of the batches' period starts (a batch's readings share one or two). */
const isoTimes = new Map<number, string>();
const iso = (ms: number): string => {
  let text = isoTimes.get(ms);
  if (text === undefined) isoTimes.set(ms, (text = new Date(ms).toISOString()));
  return text;
};

/**
 * Batch `slot` holds `batch` readings: devices in turn, each slot five minutes after the previous
 * one. The JSON text is written directly, the same bytes JSON.stringify gave of the items as
 * objects (device ids are plain ASCII the bench makes), at a fraction of the load generator's CPU,
 * which runs on the same two cores as the system it measures.
 */
function batchOf(slot: number): { body: string; samples: [string, number][] } {
  const items: string[] = [];
  const samples: [string, number][] = [];
  for (let i = 0; i < config.batch; i++) {
    const n = slot * config.batch + i;
    const device = config.devices[n % config.devices.length]!;
    const start = config.baseStart + Math.floor(n / config.devices.length) * 300_000;
    items.push(
      `{"device_id":"${device}","start_time":"${iso(start)}","duration_s":300,"last_is_online":true,"last_mode":"SELF_CONSUMPTION",` +
        `"battery_last_power_charge_w":0,"battery_last_power_discharge_w":${1800 + (n % 700)},"battery_total_energy_charge_wh":0,` +
        `"battery_total_energy_discharge_wh":${150 + (n % 60)},"battery_last_state_of_charge_percentage":${40 + (n % 50)},` +
        `"battery_last_stored_energy_wh":5400,"battery_last_capacity_energy_wh":13500,"home_last_power_w":2500,"solar_last_power_w":700}`,
    );
    if (i % Math.ceil(config.batch / config.samplesPerBatch) === 0) samples.push([device, start]);
  }
  return { body: `{"telemetry":[${items.join(',')}]}`, samples };
}

let nextSlot = 0;
const stopAt = Date.now() + config.durationMs;

async function worker(): Promise<void> {
  while (Date.now() < stopAt) {
    const slot = nextSlot++;
    const { body: text, samples } = batchOf(slot);
    // Encoded once: a resend sends the same bytes.
    const body = Buffer.from(text, 'utf8');
    // Resend until OK: what got OK must be stored exactly once, what got 503 is the cloud's to resend.
    for (;;) {
      const t0 = Date.now();
      let status = 0;
      let failedItems = 0;
      try {
        const r = await post(body);
        status = r.status;
        if (status === 200) failedItems = (JSON.parse(r.text) as { results: { status: string }[] }).results.filter((x) => x.status !== 'OK').length;
      } catch {
        status = -1;
      }
      const t1 = Date.now();
      send({ type: 'answer', cloud: config.cloud, status, ms: t1 - t0, at: t1 });
      if (status === 200) {
        send({ type: 'ok', cloud: config.cloud, okAt: t1, readings: config.batch - failedItems, failedItems, samples });
        break;
      }
      await new Promise((r) => setTimeout(r, status === 503 ? 1000 : 250));
    }
  }
}

await Promise.all(Array.from({ length: config.inflight }, worker));
agent.destroy();
send({ type: 'done', cloud: config.cloud });
if (process.connected) process.disconnect();
