import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatchOperations as Ops } from '@efs/api';
import { DemandResponseEventsTopic } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { operationRouter } from '@efs/messaging';
import { tierAvailable } from '@efs/testing';
import { createEvent } from '../src/handlers/createEvent.ts';
import { DISPATCH_SCHEMA } from '../src/service.ts';
import { KnexReadModelStore } from '../src/store/readModelStore.ts';
import {
  INTEGRATOR,
  T0,
  clientPrincipal,
  deviceMessage,
  enrollmentMessage,
  programMessage,
  sitePrincipal,
  startHarness,
  utilityPrincipal,
  type Harness,
} from './harness.ts';

const run = await tierAvailable('postgres');
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The service alone with a fake clock: statuses and command phases moved by time (and across a
 * restart), idempotent fan-out on both paths, and the read-model changes that reach commands.
 */
describe.runIf(run)('event-dispatch service (real Postgres, in-process transport, fake clock)', () => {
  let h: Harness;
  const program = programMessage();

  async function site(siteId: string, devices: string[], over: Parameters<typeof deviceMessage>[2] = {}) {
    for (const d of devices) await h.publish('device', deviceMessage(siteId, d, over));
    const e = enrollmentMessage(program.id, siteId, devices);
    await h.publish('enrollment', e);
    return e;
  }
  const create = (body: Record<string, unknown>) => h.call(Ops.createEvent, utilityPrincipal(), { body: { program_id: program.id, ...body } });
  const action = (startInS: number, durationS: number, over: Record<string, unknown> = {}) => ({ starts_at: iso(h.clock.now + startInS * 1000), duration_s: durationS, mode: 'DISCHARGE', setpoint_w: 8000, ...over });
  const commandsOf = async (eventId: string) => ((await h.call(Ops.listCommands, clientPrincipal(), { query: { limit: '1000' } })).body as any[]).filter((c) => c.event_id === eventId);
  const eventStatus = async (id: string) => (await h.call(Ops.getEvent, utilityPrincipal(), { params: { id } })).body.status;

  beforeAll(async () => {
    h = await startHarness();
    await h.publish('program', program);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('moves an event UPCOMING → IN_PROGRESS → COMPLETED with the clock, announcing each status and each command start and end', async () => {
    await site('s-time', ['b1', 'b2']);
    const created = await create({ target_type: 'SITE', target_ids: ['s-time'], actions: [action(60, 60)] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const announced = () => h.events.filter((e) => e.id === id).map((e) => [e.change, e.status]);
    const phases = () => h.commands.filter((c) => c.value.event_id === id).map((c) => c.value.change);
    expect(announced()).toEqual([['CREATED', 'UPCOMING']]);
    expect(phases()).toEqual(['CREATED', 'CREATED']);

    h.clock.now += 60_000;
    // The API answers by the clock before the scheduler has run; the scheduler records and announces it.
    expect(await eventStatus(id)).toBe('IN_PROGRESS');
    await h.service.scheduler.runOnce();
    await h.settle();
    expect(announced()).toEqual([['CREATED', 'UPCOMING'], ['UPDATED', 'IN_PROGRESS']]);
    expect(phases()).toEqual(['CREATED', 'CREATED', 'STARTED', 'STARTED']);
    expect(h.events.filter((e) => e.id === id).at(-1)!.updated_at).toBe(iso(T0 + 60_000));

    h.clock.now += 60_000;
    await h.service.scheduler.runOnce();
    await h.settle();
    expect(announced()).toEqual([['CREATED', 'UPCOMING'], ['UPDATED', 'IN_PROGRESS'], ['UPDATED', 'COMPLETED']]);
    expect(phases()).toEqual(['CREATED', 'CREATED', 'STARTED', 'STARTED', 'ENDED', 'ENDED']);
    // Nothing more is due: another run announces nothing twice.
    expect(await h.service.scheduler.runOnce()).toEqual({ events: 0, commands: 0, fannedOut: 0 });
    expect((await h.call(Ops.updateSiteEvent, sitePrincipal('s-time'), { params: { siteId: 's-time', eventId: id }, body: { is_participating: false } })).body.code).toBe('EVENT_NOT_MODIFIABLE');
    expect((await h.call(Ops.cancelEvent, utilityPrincipal(), { params: { id } })).status).toBe(409);
    for (const c of h.commands.filter((x) => x.value.event_id === id)) expect(c.key).toBe(`${INTEGRATOR}/s-time/${c.value.device_id}`);
  });

  it('applies at start a transition that came due while the service was down, announcing every status it passed', async () => {
    await site('s-down', ['b1']);
    const id = (await create({ target_type: 'SITE', target_ids: ['s-down'], actions: [action(30, 30)] })).body.id as string;
    // Down for ten minutes: the whole event passes while nothing runs.
    h.clock.now += 10 * 60_000;
    await h.restart();
    await h.settle();
    expect(h.events.filter((e) => e.id === id).map((e) => e.status)).toEqual(['UPCOMING', 'IN_PROGRESS', 'COMPLETED']);
    const [row] = await h.db.knex.withSchema('dispatch').table('events').where({ id });
    expect(row).toMatchObject({ status: 'COMPLETED', next_transition_at: null });
    expect(h.commands.filter((c) => c.value.event_id === id).map((c) => c.value.change)).toEqual(['CREATED', 'STARTED', 'ENDED']);
  });

  it('fans out once: a redelivered announcement or a second run creates no second command', async () => {
    await site('s-once', ['b1', 'b2', 'b3']);
    const id = (await create({ target_type: 'SITE', target_ids: ['s-once'], actions: [action(600, 60), action(700, 60)] })).body.id as string;
    expect(await commandsOf(id)).toHaveLength(6);
    const created = h.events.find((e) => e.id === id && e.change === 'CREATED')!;
    await h.transport.publish(DemandResponseEventsTopic, id, created);
    await h.settle();
    expect(await h.service.context.fanOut.run(id)).toBe(0);
    expect(await commandsOf(id)).toHaveLength(6);
    expect(h.commands.filter((c) => c.value.event_id === id && c.value.change === 'CREATED')).toHaveLength(6);
    // Even with the mark cleared, the one-command-per-device-and-action key keeps it at six.
    await h.db.knex.withSchema('dispatch').table('events').where({ id }).update({ commands_created_at: null });
    expect(await h.service.context.fanOut.run(id)).toBe(0);
    expect(await commandsOf(id)).toHaveLength(6);
  });

  it("an event's sites answer 503 when telemetry-ingest does not answer, rather than actual figures it never gave", async () => {
    await site('s-perf', ['b1']);
    const measured = (await create({ target_type: 'SITE', target_ids: ['s-perf'], actions: [action(600, 60)] })).body.id as string;
    // Nobody serves telemetry here: the call times out (DISPATCH_TELEMETRY_TIMEOUT_MS).
    const r = await h.call(Ops.listEventSites, utilityPrincipal(), { params: { id: measured }, query: { limit: '10' } });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('SERVICE_UNAVAILABLE');
    // An event with nothing to measure (STANDBY has no direction) does not ask telemetry at all.
    const standby = (await create({ target_type: 'SITE', target_ids: ['s-perf'], actions: [action(900, 60, { mode: 'STANDBY', setpoint_w: null })] })).body.id as string;
    const s = await h.call(Ops.listEventSites, utilityPrincipal(), { params: { id: standby }, query: { limit: '10' } });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.body).toEqual([{ site_id: 's-perf', is_participating: true, performance_expected_energy_wh: null, performance_expected_power_w: null, performance_actual_energy_wh: null, performance_actual_power_w: null }]);
  });

  it('a redelivered create request answers the event it created', async () => {
    await site('s-redeliver', ['b1']);
    const router = operationRouter(Ops, { createEvent: createEvent(h.service.context) }, createLogger({ name: 't', level: 'silent' }));
    const request = { op: Ops.createEvent.name, principal: utilityPrincipal(), params: {}, query: {}, body: JSON.stringify({ program_id: program.id, target_type: 'SITE', target_ids: ['s-redeliver'], actions: [action(600, 60)] }) };
    const meta = (id: string) => ({ id, topic: 'efs.dispatch.requests', key: null, headers: {}, partition: 0, offset: '0' });
    const first = JSON.parse((await router(request, meta('m-1'))).body!);
    const again = JSON.parse((await router(request, meta('m-1'))).body!);
    const other = JSON.parse((await router(request, meta('m-2'))).body!);
    expect(again).toEqual(first);
    expect(other.id).not.toBe(first.id);
    const rows = await h.db.knex.withSchema('dispatch').table('commands').whereIn('event_id', [first.id, other.id]);
    expect(rows).toHaveLength(2);
  });

  it('creates the commands of a large event from its announcement, after the request answered', async () => {
    const small = await startHarness({ DISPATCH_INLINE_FAN_OUT_MAX: 2 });
    try {
      const p = programMessage();
      await small.publish('program', p);
      const devices = Array.from({ length: 5 }, (_, i) => `d${i}`);
      for (const d of devices) await small.publish('device', deviceMessage('s-big', d));
      await small.publish('enrollment', enrollmentMessage(p.id, 's-big', devices));
      const r = await small.call(Ops.createEvent, utilityPrincipal(), { body: { program_id: p.id, target_type: 'PROGRAM', target_ids: [], actions: [action(600, 60, { setpoint_w: 10_001 })] } });
      expect(r.status).toBe(200);
      const list = ((await small.call(Ops.listCommands, clientPrincipal(), {})).body as any[]).filter((c) => c.event_id === r.body.id);
      expect(list.map((c) => c.battery_commands.setpoint_w).sort()).toEqual([2000, 2000, 2000, 2000, 2001]);
    } finally {
      await small.stop();
    }
  });

  it('a device in two ACTIVE enrollments of the program gets one share of an EVEN split, not two', async () => {
    // Two enrollments ACTIVE at once for one device (the read model has the newer one's approval
    // before the older one's end, messages of different enrollments being unordered).
    const p = programMessage();
    await h.publish('program', p);
    for (const d of ['tw1', 'tw2']) await h.publish('device', deviceMessage('s-twice', d));
    await h.publish('enrollment', enrollmentMessage(p.id, 's-twice', ['tw1', 'tw2']));
    await h.publish('enrollment', enrollmentMessage(p.id, 's-twice', ['tw1']));
    for (const target of [{ target_type: 'SITE', target_ids: ['s-twice'] }, { target_type: 'DEVICE', target_ids: ['tw1', 'tw2'] }, { target_type: 'PROGRAM', target_ids: [] }]) {
      const created = await h.call(Ops.createEvent, utilityPrincipal(), { body: { program_id: p.id, ...target, actions: [action(3600, 60, { setpoint_w: 8000 })] } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const commands = await h.service.context.commands.forEvent(h.db.knex, created.body.id);
      expect(commands.map((c) => [c.device_id, c.setpoint_w]), target.target_type).toEqual([
        ['tw1', 4000],
        ['tw2', 4000],
      ]);
    }
  });

  it("a deleted device's commands that have not ended are canceled; ended ones stay as they ran", async () => {
    await site('s-del', ['b1']);
    const past = (await create({ target_type: 'SITE', target_ids: ['s-del'], actions: [action(10, 10)] })).body.id as string;
    const future = (await create({ target_type: 'SITE', target_ids: ['s-del'], actions: [action(3600, 60)] })).body.id as string;
    h.clock.now += 30_000;
    await h.service.scheduler.runOnce();
    await h.publish('device', deviceMessage('s-del', 'b1', { deleted: true, updated_at: '2026-02-01T00:00:00.000Z' }));
    expect((await commandsOf(future))[0]).toMatchObject({ status: 'CANCELED' });
    expect((await commandsOf(past))[0]).toMatchObject({ status: 'OK' });
    expect(h.commands.filter((c) => c.value.event_id === future).map((c) => c.value.change)).toEqual(['CREATED', 'CANCELED']);
    // A redelivered (older) device state changes nothing.
    await h.publish('device', deviceMessage('s-del', 'b1'));
    expect((await commandsOf(future))[0]).toMatchObject({ status: 'CANCELED' });
  });

  it("an ended enrollment cancels its devices' commands; commands of a later enrollment stay", async () => {
    const e = await site('s-end', ['b1']);
    const id = (await create({ target_type: 'SITE', target_ids: ['s-end'], actions: [action(3600, 60)] })).body.id as string;
    const ended = { ...e, status: 'UNENROLLED' as const, updated_at: iso(h.clock.now) };
    await h.publish('enrollment', ended);
    expect((await commandsOf(id))[0]).toMatchObject({ status: 'CANCELED' });
    h.clock.now += 1000;
    await site('s-end', ['b1']);
    const later = (await create({ target_type: 'SITE', target_ids: ['s-end'], actions: [action(3600, 60)] })).body.id as string;
    await h.publish('enrollment', ended, 'redelivered');
    expect((await commandsOf(later))[0]).toMatchObject({ status: 'OK' });
  });

  it("commands that follow the device's own level move when it changes (a program without a minimum)", async () => {
    const open = programMessage({ minimum_reserve_percentage: 0 });
    await h.publish('program', open);
    await h.publish('device', deviceMessage('s-own', 'b1', { reserve_percentage: 30 }));
    await h.publish('enrollment', enrollmentMessage(open.id, 's-own', ['b1']));
    const id = (await h.call(Ops.createEvent, utilityPrincipal(), { body: { program_id: open.id, target_type: 'DEVICE', target_ids: ['b1'], actions: [action(3600, 60)] } })).body.id;
    expect((await commandsOf(id))[0].battery_commands.backup_reserve_percentage).toBe(30);
    await h.publish('device', deviceMessage('s-own', 'b1', { reserve_percentage: 45, updated_at: '2026-03-01T00:00:00.000Z' }));
    expect((await commandsOf(id))[0].battery_commands.backup_reserve_percentage).toBe(45);
    expect(h.commands.filter((c) => c.value.event_id === id).map((c) => [c.value.change, c.value.battery_commands.backup_reserve_percentage])).toEqual([
      ['CREATED', 30],
      ['UPDATED', 45],
    ]);
  });

  it('a batch of device states keeps the newest of each device, and ids holding a slash stay apart', async () => {
    const store = new KnexReadModelStore(DISPATCH_SCHEMA);
    const at = (d: string) => `2026-03-0${d}T00:00:00.000Z`;
    await store.upsertDevices(h.db.knex, [
      deviceMessage('a', 'b/c', { serial_number: 'first', updated_at: at('1') }),
      deviceMessage('a/b', 'c', { serial_number: 'other', updated_at: at('1') }),
      deviceMessage('a', 'b/c', { serial_number: 'newest', updated_at: at('3') }),
      deviceMessage('a', 'b/c', { serial_number: 'older, later in the batch', updated_at: at('2') }),
    ]);
    const rows = (await h.db.knex.withSchema(DISPATCH_SCHEMA).table('devices').whereIn('site_id', ['a', 'a/b']).orderBy('site_id').select('site_id', 'id', 'updated_at')) as { site_id: string; id: string; updated_at: string }[];
    expect(rows.map((r) => [r.site_id, r.id, new Date(r.updated_at).toISOString()])).toEqual([
      ['a', 'b/c', at('3')],
      ['a/b', 'c', at('1')],
    ]);
  });
});
