/**
 * A mixed load over a running distributed system, as its audiences make it at once: a device
 * cloud commissioning sites, its end users enrolling them, the utility creating PROGRAM events,
 * the device cloud acknowledging their commands and reporting telemetry, and webhook deliveries
 * to a receiver on loopback. It records every answer (status, Retry-After, how long it took) and
 * every write that was acknowledged; `lost()` then says which acknowledged writes are missing from
 * the owners and from every read model, and which webhook messages never arrived.
 */
import pg from 'pg';
import { SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, waitFor } from '@efs/testing';
import { battery, uid } from '../commissioningHelpers.ts';
import { WebhookReceiver, type Received } from '../webhookReceiver.ts';
import type { DistributedSystem } from './distributed.ts';

const INTEGRATOR = 'sandbox-integrator';
/** An answer slower than this counts as a hang: the gateway's deadline (REQUEST_TIMEOUT_MS) plus its grace, and room to spare. */
const HANG_MS = 20_000;

/** One answer the load got. */
export interface Answer {
  what: string;
  /** The HTTP status; 0: no answer (the connection was refused or reset: the gateway process is down); -1: no answer in HANG_MS. */
  status: number;
  retryAfter: string | null;
  ms: number;
  at: number;
  code?: string;
}

interface Response {
  status: number;
  body: any;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const site = (id: string, zip: string) => ({ id, zip_code: zip, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way' });

export class MixedLoad {
  readonly answers: Answer[] = [];
  /** Sites whose commissioning was answered 200, with their devices. */
  readonly commissioned = new Map<string, string[]>();
  /** Enrollments answered 200 (PENDING), by id, with their site. */
  readonly enrollments = new Map<string, string>();
  /** PROGRAM events answered 200, by id, with the devices ACTIVE in the program when they were made. */
  readonly events = new Map<string, number>();
  /** Commands whose acknowledgement (device_status OK) was answered 200. */
  readonly acknowledged = new Set<string>();
  /** Telemetry items answered OK: `device start_time`. */
  readonly readings = new Set<string>();
  readonly receiver = new WebhookReceiver();
  program = { id: '', zip: '' };
  webhookSecret = '';
  /** Devices enrolled ACTIVE before the load: the PROGRAM events' targets and the telemetry's senders. */
  activeDevices: string[] = [];

  private readonly sys: DistributedSystem;
  private stopped = false;
  private running: Promise<void>[] = [];
  private readonly siteTokens = new Map<string, string>();
  private telemetrySlot = 0;
  private readonly telemetryBase = Math.floor(Date.now() / 300_000) * 300_000 - 30 * 86_400_000;

  constructor(sys: DistributedSystem) {
    this.sys = sys;
  }

  /** One call through the gateway, recorded; never throws (no answer is status 0 or -1). */
  private async call(what: string, base: 'public' | 'utility', method: string, path: string, body?: unknown, token?: string): Promise<Response> {
    const started = Date.now();
    const headers: Record<string, string> = { authorization: `Bearer ${token ?? (base === 'public' ? SANDBOX_CLIENT_TOKEN : SANDBOX_UTILITY_API_KEY)}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const r = await fetch(this.sys.urls[base] + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(HANG_MS) });
      const text = await r.text();
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      this.answers.push({ what, status: r.status, retryAfter: r.headers.get('retry-after'), ms: Date.now() - started, at: started, ...(parsed?.code ? { code: parsed.code } : {}) });
      return { status: r.status, body: parsed };
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      this.answers.push({ what, status: timedOut ? -1 : 0, retryAfter: null, ms: Date.now() - started, at: started });
      if (!timedOut) await sleep(100);
      return { status: timedOut ? -1 : 0, body: undefined };
    }
  }

  /** Retries a setup call until it is answered 200 (the system may still be settling). */
  private async setupCall(what: string, base: 'public' | 'utility', method: string, path: string, body?: unknown, token?: string): Promise<any> {
    let last: Response | undefined;
    return waitFor(async () => {
      last = await this.call(what, base, method, path, body, token);
      return last.status === 200 ? (last.body ?? true) : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200, what: `${what} (last answer ${last?.status} ${JSON.stringify(last?.body)})` });
  }

  private async siteToken(siteId: string): Promise<string | undefined> {
    const known = this.siteTokens.get(siteId);
    if (known) return known;
    const r = await this.call('site token', 'public', 'POST', `/v1/auth/site/${siteId}`);
    if (r.status !== 200) return undefined;
    this.siteTokens.set(siteId, r.body.site_access_token);
    return r.body.site_access_token;
  }

  /** A program of the sandbox utility on a zip of its own, three sites enrolled ACTIVE in it, and a webhook subscription. */
  async prepare(activeSites = 3): Promise<void> {
    await this.receiver.start();
    this.program.zip = String(10_000 + Math.floor(Math.random() * 80_000));
    const program = await this.setupCall('program', 'utility', 'POST', '/v1/programs', { name: uid('Restart'), eligible_device_types: ['BATTERY'], zip_codes: [this.program.zip], minimum_reserve_percentage: 20 });
    this.program.id = program.id;
    const webhook = await this.setupCall('webhook', 'public', 'POST', '/v1/webhooks', { url: this.receiver.endpoint('integrator'), event_types: ['command.created', 'enrollment.created'] });
    this.webhookSecret = webhook.secret;
    for (let i = 0; i < activeSites; i++) {
      const siteId = uid('active');
      const devices = [battery(siteId, uid('bat')), battery(siteId, uid('bat'))];
      await this.setupCall('commission a site', 'public', 'POST', '/v1/commission', { site: site(siteId, this.program.zip), devices, can_auto_enroll: false });
      const token = await waitFor(() => this.siteToken(siteId), { timeoutMs: 30_000, what: 'a site token' });
      const enrollment = await this.setupCall('enroll', 'public', 'POST', `/v1/site/${siteId}/enrollments`, { program_id: this.program.id, device_ids: devices.map((d) => d.id) }, token);
      await this.setupCall('approve', 'utility', 'PATCH', `/v1/enrollments/${enrollment.id}`, { status: 'ACTIVE' });
      this.commissioned.set(siteId, devices.map((d) => d.id));
      this.enrollments.set(enrollment.id, siteId);
      this.activeDevices.push(...devices.map((d) => d.id));
    }
    // Dispatch follows the enrollment topic: the first event is made once it knows every device.
    await waitFor(async () => {
      const r = await this.call('event', 'utility', 'POST', '/v1/events', this.eventBody());
      if (r.status !== 200) return false;
      this.events.set(r.body.id, this.activeDevices.length);
      const commands = await this.commandsOf(r.body.id);
      return commands !== undefined && commands.length === this.activeDevices.length;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'a first event over every active device' });
    this.answers.length = 0;
  }

  private eventBody() {
    return { program_id: this.program.id, target_type: 'PROGRAM', target_ids: [this.program.id], actions: [{ starts_at: new Date(Date.now() + 3_600_000).toISOString(), duration_s: 900, mode: 'DISCHARGE', setpoint_w: 2000 }] };
  }

  private async commandsOf(eventId: string): Promise<any[] | undefined> {
    const r = await this.call('list commands', 'public', 'GET', `/v1/commands?limit=1000&updated_since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    if (r.status !== 200) return undefined;
    return (r.body as any[]).filter((c) => c.event_id === eventId);
  }

  /** Starts the workers; they run until `stop()`. */
  start(): void {
    const loop = (pauseMs: number, step: () => Promise<void>) => async () => {
      while (!this.stopped) {
        await step();
        await sleep(pauseMs);
      }
    };
    this.running = [
      loop(20, () => this.commissionOne()),
      loop(20, () => this.commissionOne()),
      loop(50, () => this.enrollOne()),
      loop(2000, () => this.eventOne()),
      loop(300, () => this.acknowledgeSome()),
      loop(100, () => this.telemetryOne()),
      loop(200, async () => void (await this.call('programs', 'public', 'GET', `/v1/programs?zip_code=${this.program.zip}`))),
    ].map((worker) => worker());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  /** Waits until the load has had `n` more writes of each kind acknowledged than now. */
  async progress(n = 3, timeoutMs = 120_000): Promise<void> {
    const counts = () => [this.commissioned.size, this.enrollments.size, this.events.size, this.acknowledged.size, this.readings.size];
    const before = counts();
    await waitFor(() => counts().every((c, i) => c >= before[i]! + n), { timeoutMs, intervalMs: 200, what: `${n} more acknowledged writes of each kind (now ${counts().join(', ')}, from ${before.join(', ')})` });
  }

  private async commissionOne(): Promise<void> {
    const siteId = uid('load');
    const devices = [battery(siteId, uid('bat'))];
    const r = await this.call('commission a site', 'public', 'POST', '/v1/commission', { site: site(siteId, this.program.zip), devices, can_auto_enroll: false });
    if (r.status === 200) this.commissioned.set(siteId, devices.map((d) => d.id));
  }

  private enrolled = new Set<string>();

  private async enrollOne(): Promise<void> {
    const siteId = [...this.commissioned.keys()].find((s) => !this.enrolled.has(s));
    if (!siteId) return;
    const token = await this.siteToken(siteId);
    if (!token) return;
    const r = await this.call('enroll', 'public', 'POST', `/v1/site/${siteId}/enrollments`, { program_id: this.program.id, device_ids: this.commissioned.get(siteId) }, token);
    if (r.status === 200) {
      this.enrolled.add(siteId);
      this.enrollments.set(r.body.id, siteId);
    } else if (r.status === 409) {
      // Enrolled already: an earlier attempt was done though its answer was lost (at most once per site).
      this.enrolled.add(siteId);
    }
  }

  private async eventOne(): Promise<void> {
    const r = await this.call('event', 'utility', 'POST', '/v1/events', this.eventBody());
    if (r.status === 200) this.events.set(r.body.id, this.activeDevices.length);
  }

  private async acknowledgeSome(): Promise<void> {
    const r = await this.call('list commands', 'public', 'GET', `/v1/commands?device_status=PENDING&limit=100&updated_since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    if (r.status !== 200) return;
    // Only commands of this load's events: an earlier load's are none of its business.
    for (const c of (r.body as { id: string; event_id: string }[]).filter((x) => this.events.has(x.event_id) && !this.acknowledged.has(x.id)).slice(0, 4)) {
      const a = await this.call('acknowledge', 'public', 'PATCH', `/v1/command/${c.id}`, { device_status: 'OK' });
      if (a.status === 200) this.acknowledged.add(c.id);
    }
  }

  private async telemetryOne(): Promise<void> {
    const slot = this.telemetrySlot++;
    const start = new Date(this.telemetryBase + slot * 300_000).toISOString();
    const items = this.activeDevices.map((device_id, i) => ({ device_id, start_time: start, duration_s: 300, battery_total_energy_discharge_wh: slot * 10 + i }));
    const r = await this.call('telemetry', 'public', 'POST', '/v1/telemetry/BATTERY', { telemetry: items });
    if (r.status !== 200) return;
    (r.body.results as { status: string }[]).forEach((x, i) => {
      if (x.status === 'OK') this.readings.add(`${items[i]!.device_id} ${start}`);
    });
  }

  /** Answers that break the contract of an outage: a 5xx but 503, a 503 without Retry-After, no answer within HANG_MS, or (when the gateway was not killed) no answer at all. */
  misbehaved(opts: { gatewayDown?: boolean } = {}): Answer[] {
    return this.answers.filter((a) => (a.status >= 500 && a.status !== 503) || (a.status === 503 && a.retryAfter === null) || a.status === -1 || (a.status === 0 && !opts.gatewayDown));
  }

  /** What the load got, by status, for a failure message or a log line. */
  summary(): string {
    const by = new Map<string, number>();
    for (const a of this.answers) by.set(`${a.what} ${a.status}${a.code ? ` ${a.code}` : ''}`, (by.get(`${a.what} ${a.status}${a.code ? ` ${a.code}` : ''}`) ?? 0) + 1);
    return [...by.entries()].sort().map(([k, v]) => `${k}: ${v}`).join(', ');
  }

  /**
   * Every acknowledged write that is missing somewhere it should be: sites and devices in the
   * owner and in each read model (catalog, enrollment, dispatch, the gateway's device directory),
   * enrollments in dispatch's and telemetry's read models, every event's commands, acknowledged
   * commands still PENDING, readings not stored, and webhook messages (command.created of every
   * command, enrollment.created of every acknowledged enrollment) the receiver never got.
   */
  async lost(): Promise<string[]> {
    const c = new pg.Client({ connectionString: this.sys.database.url });
    await c.connect();
    try {
      const ids = async (sql: string, bind: unknown[]) => new Set(((await c.query(sql, bind)).rows as { id: string }[]).map((r) => r.id));
      const sites = [...this.commissioned.keys()];
      const devices = [...this.commissioned.values()].flat();
      const missing: string[] = [];
      const check = async (what: string, wanted: string[], sql: string) => {
        const have = await ids(sql, [wanted, INTEGRATOR]);
        const gone = wanted.filter((x) => !have.has(x));
        if (gone.length > 0) missing.push(`${gone.length} of ${wanted.length} ${what}, e.g. ${gone.slice(0, 3).join(' ')}`);
      };
      await check('sites in commissioning', sites, 'select id from commissioning.sites where id = any($1) and integrator_id = $2');
      await check('devices in commissioning', devices, 'select id from commissioning.devices where id = any($1) and integrator_id = $2');
      await check('sites in the catalog', sites, 'select site_id as id from catalog.site_views where site_id = any($1) and integrator_id = $2');
      await check('devices in the catalog', devices, 'select device_id as id from catalog.device_views where device_id = any($1) and integrator_id = $2 and not deleted');
      await check('sites in enrollment', sites, 'select id from enrollment.sites where id = any($1) and integrator_id = $2');
      await check('devices in enrollment', devices, 'select id from enrollment.devices where id = any($1) and integrator_id = $2 and not deleted');
      await check('devices in dispatch', devices, 'select id from dispatch.devices where id = any($1) and integrator_id = $2 and not deleted');
      await check('devices in the gateway', devices, 'select device_id as id from auth.device_directory where device_id = any($1) and integrator_id = $2 and not deleted');
      const enrollments = [...this.enrollments.keys()];
      await check('enrollments in enrollment', enrollments, 'select id from enrollment.enrollments where id = any($1) and integrator_id = $2');
      await check('enrollments in dispatch', enrollments, 'select id from dispatch.enrollments where id = any($1) and integrator_id = $2');
      await check('enrollments in telemetry', enrollments, 'select id from telemetry.enrollments where id = any($1) and integrator_id = $2');

      const commands = (await c.query('select id, event_id, device_status from dispatch.commands where event_id = any($1)', [[...this.events.keys()]])).rows as { id: string; event_id: string; device_status: string }[];
      for (const [eventId, count] of this.events) {
        const n = commands.filter((x) => x.event_id === eventId).length;
        if (n !== count) missing.push(`event ${eventId}: ${n} commands instead of ${count}`);
      }
      const notOk = [...this.acknowledged].filter((id) => commands.find((x) => x.id === id)?.device_status !== 'OK');
      if (notOk.length > 0) missing.push(`${notOk.length} of ${this.acknowledged.size} acknowledged commands not OK, e.g. ${notOk.slice(0, 3).join(' ')}`);

      const stored = new Set(((await c.query(`select device_id || ' ' || to_char(start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as id from telemetry.readings where device_id = any($1)`, [this.activeDevices])).rows as { id: string }[]).map((r) => r.id));
      const unstored = [...this.readings].filter((r) => !stored.has(r));
      if (unstored.length > 0) missing.push(`${unstored.length} of ${this.readings.size} acknowledged readings not stored, e.g. ${unstored.slice(0, 3).join(', ')}`);

      const got = this.webhookMessages();
      const undelivered = [...commands.map((x) => `command.created ${x.id}`), ...enrollments.map((id) => `enrollment.created ${id}`)].filter((k) => !got.has(k));
      if (undelivered.length > 0) missing.push(`${undelivered.length} webhook messages never delivered, e.g. ${undelivered.slice(0, 3).join(', ')}`);
      return missing;
    } finally {
      await c.end();
    }
  }

  /** The receiver's messages by `event_type object-id`, each with the webhook-id headers it came with. */
  webhookMessages(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const r of this.receiver.at('integrator') as Received[]) {
      const m = JSON.parse(r.body) as { event_type: string; event_object: { id: string } };
      const key = `${m.event_type} ${m.event_object.id}`;
      if (!out.has(key)) out.set(key, new Set());
      out.get(key)!.add(String(r.headers['webhook-id']));
    }
    return out;
  }

  /** Webhook messages delivered more than once under different ids: a duplicate a receiver cannot recognise. */
  duplicatesWithNewIds(): string[] {
    return [...this.webhookMessages().entries()].filter(([, ids]) => ids.size > 1).map(([k, ids]) => `${k}: ${[...ids].join(', ')}`);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.receiver.stop().catch(() => undefined);
  }
}
