import { describe, expect, it } from 'vitest';
import { EventActionCreate, EventCreate } from '@efs/api';
import { AppError } from '@efs/errors';
import { thrownBy } from '@efs/testing';
import { normalizeActions, spanOf, toApiAction } from '../src/domain/actions.ts';
import { commandStatus, duePhases, phaseDueAt, type Command } from '../src/domain/command.ts';
import type { DrEvent } from '../src/domain/event.ts';
import { dueTransitions, isModifiable, nextTransitionAt, statusAt, statusConditions, updatedAtView } from '../src/domain/eventStatus.ts';
import { planCommands, type TargetDevice } from '../src/domain/fanOut.ts';
import { planParticipation, requestedLevels } from '../src/domain/participation.ts';
import { expectedPerformance } from '../src/domain/performance.ts';
import { assertAboveMinimum, effectiveReserve } from '../src/domain/reserve.ts';
import { assertAllowedLevel, settle, type SettingsRequest } from '../src/domain/settings.ts';
import { evenSplit, ratedPowerW } from '../src/domain/split.ts';
import { distinctDevices, resolveTargets, targetIdsOf, type TargetFacts } from '../src/domain/targets.ts';

const at = (iso: string) => new Date(iso);
const T0 = at('2026-06-01T12:00:00Z');
const plus = (s: number, from = T0) => new Date(from.getTime() + s * 1000);

const appError = (fn: () => unknown): AppError => thrownBy(fn, AppError);

describe('event status by time', () => {
  const e = { starts_at: plus(60), ends_at: plus(120), canceled_at: null };

  it('is UPCOMING before the start, IN_PROGRESS from it, COMPLETED from the end, CANCELED once canceled', () => {
    expect(statusAt(e, T0)).toBe('UPCOMING');
    expect(statusAt(e, plus(59.999))).toBe('UPCOMING');
    expect(statusAt(e, plus(60))).toBe('IN_PROGRESS');
    expect(statusAt(e, plus(119.999))).toBe('IN_PROGRESS');
    expect(statusAt(e, plus(120))).toBe('COMPLETED');
    expect(statusAt({ ...e, canceled_at: plus(10) }, plus(500))).toBe('CANCELED');
    expect(isModifiable('UPCOMING') && isModifiable('IN_PROGRESS')).toBe(true);
    expect(isModifiable('COMPLETED') || isModifiable('CANCELED')).toBe(false);
  });

  it('lists every transition due since the last announced status, each at the moment it happened', () => {
    expect(dueTransitions('UPCOMING', e, T0)).toEqual([]);
    expect(dueTransitions('UPCOMING', e, plus(61))).toEqual([{ status: 'IN_PROGRESS', at: plus(60) }]);
    // Down through the whole event: both transitions, in order.
    expect(dueTransitions('UPCOMING', e, plus(600))).toEqual([
      { status: 'IN_PROGRESS', at: plus(60) },
      { status: 'COMPLETED', at: plus(120) },
    ]);
    expect(dueTransitions('IN_PROGRESS', e, plus(600))).toEqual([{ status: 'COMPLETED', at: plus(120) }]);
    expect(dueTransitions('COMPLETED', e, plus(600))).toEqual([]);
    expect(dueTransitions('UPCOMING', { ...e, canceled_at: T0 }, plus(600))).toEqual([]);
    expect(nextTransitionAt('UPCOMING', e)).toEqual(plus(60));
    expect(nextTransitionAt('IN_PROGRESS', e)).toEqual(plus(120));
    expect(nextTransitionAt('CANCELED', e)).toBeNull();
  });

  it('shows a status reached by time as a change at that moment', () => {
    const stored = { ...e, updated_at: T0 };
    expect(updatedAtView(stored, plus(30))).toEqual(T0);
    expect(updatedAtView(stored, plus(90))).toEqual(plus(60));
    expect(updatedAtView(stored, plus(900))).toEqual(plus(120));
    expect(updatedAtView({ ...stored, canceled_at: plus(5), updated_at: plus(5) }, plus(900))).toEqual(plus(5));
  });

  it('turns a status filter into conditions on the clock', () => {
    expect(statusConditions(['UPCOMING', 'CANCELED', 'UPCOMING'], T0)).toEqual([{ status: 'UPCOMING', startsAfter: T0 }, { status: 'CANCELED' }]);
    expect(statusConditions(['IN_PROGRESS', 'COMPLETED'], T0)).toEqual([
      { status: 'IN_PROGRESS', startedBy: T0, endsAfter: T0 },
      { status: 'COMPLETED', endedBy: T0 },
    ]);
  });
});

describe('EVEN split', () => {
  it('shares integer watts that sum to exactly the setpoint, the remainder one watt each to the first devices', () => {
    expect(evenSplit(10, [null, null, null])).toEqual([4, 3, 3]);
    expect(evenSplit(9000, [null, null])).toEqual([4500, 4500]);
    expect(evenSplit(2, [null, null, null])).toEqual([1, 1, 0]);
    for (const [total, n] of [[1, 7], [1_000_003, 9], [123_456_789, 100_000], [5, 5]] as const) {
      const shares = evenSplit(total, Array<null>(n).fill(null));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      for (const s of shares) expect(Number.isInteger(s)).toBe(true);
    }
  });

  it("caps each share by the device's rated power", () => {
    expect(evenSplit(9000, [1000, 5000, null])).toEqual([1000, 3000, 3000]);
    expect(evenSplit(12000, [5000, 5000])).toEqual([5000, 5000]);
    expect(evenSplit(100, [0, 100])).toEqual([0, 50]);
  });

  it('never overflows or rounds at the largest setpoint the API takes, and refuses what it cannot split exactly', () => {
    const shares = evenSplit(Number.MAX_SAFE_INTEGER, Array<null>(3).fill(null));
    expect(shares.reduce((a, b) => a + b, 0)).toBe(Number.MAX_SAFE_INTEGER);
    expect(evenSplit(Number.MAX_SAFE_INTEGER, [])).toEqual([]);
    expect(() => evenSplit(2 ** 53 + 2, [null])).toThrow(RangeError);
    expect(() => evenSplit(1.5, [null])).toThrow(RangeError);
    expect(EventActionCreate.safeParse({ starts_at: T0.toISOString(), duration_s: 60, mode: 'DISCHARGE', setpoint_w: 2 ** 60 }).success).toBe(false);
  });

  it('reads the rated power from the attributes: output to discharge, input to charge, a charger only charges', () => {
    const b = { type: 'BATTERY' as const, attributes: { battery_power_input_w: 3000, battery_power_output_w: 5000 } };
    expect(ratedPowerW(b, 'DISCHARGE')).toBe(5000);
    expect(ratedPowerW(b, 'CHARGE')).toBe(3000);
    expect(ratedPowerW(b, 'STANDBY')).toBeNull();
    expect(ratedPowerW({ type: 'EV_CHARGER', attributes: { max_charge_power_w: 11000 } }, 'CHARGE')).toBe(11000);
    expect(ratedPowerW({ type: 'EV_CHARGER', attributes: {} }, 'DISCHARGE')).toBe(0);
    expect(ratedPowerW({ type: null, attributes: null }, 'DISCHARGE')).toBeNull();
  });
});

describe('effective reserve', () => {
  const levels = { eventLevel: null, actionLevel: null, programMinimum: 20, deviceLevel: 35 };
  it("is the event-specific level if set, else the program's, else the device's own", () => {
    expect(effectiveReserve({ ...levels, eventLevel: 50 })).toEqual({ percentage: 50, source: 'EVENT' });
    expect(effectiveReserve({ ...levels, eventLevel: 0, actionLevel: 40 })).toEqual({ percentage: 0, source: 'EVENT' });
    expect(effectiveReserve(levels)).toEqual({ percentage: 20, source: 'PROGRAM' });
    expect(effectiveReserve({ ...levels, actionLevel: 40 })).toEqual({ percentage: 40, source: 'PROGRAM' });
    expect(effectiveReserve({ ...levels, programMinimum: 0 })).toEqual({ percentage: 35, source: 'DEVICE' });
    expect(effectiveReserve({ ...levels, programMinimum: 0, deviceLevel: null })).toEqual({ percentage: 0, source: 'DEVICE' });
  });

  it('refuses a level below the minimum, naming each field', () => {
    expect(() => assertAboveMinimum([{ path: ['backup_reserve_percentage'], level: 20 }, { path: ['x'], level: null }], 20)).not.toThrow();
    const err = appError(() => assertAboveMinimum([{ path: ['backup_reserve_percentage'], level: 19 }, { path: ['device_settings', 1, 'backup_reserve_percentage'], level: 5 }], 20));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.errors.map((e) => e.path)).toEqual(['backup_reserve_percentage', 'device_settings/1/backup_reserve_percentage']);
    expect(err.detail[1]!.loc).toEqual(['body', 'device_settings', '1', 'backup_reserve_percentage']);
  });
});

describe('targets', () => {
  const fact = (id: string, f: Partial<TargetFacts>): [string, TargetFacts] => [id, { id, known: true, openIntegrators: ['a'], activeIntegrators: ['a'], activeDevices: 1, ...f }];

  it('resolves each SITE or DEVICE id to the one integrator whose ACTIVE devices it names', () => {
    const facts = new Map([fact('s1', {}), fact('s2', { openIntegrators: ['b'], activeIntegrators: ['b'], activeDevices: 3 })]);
    expect(resolveTargets('SITE', ['s1', 's2'], facts)).toEqual([
      { id: 's1', integrator_id: 'a' },
      { id: 's2', integrator_id: 'b' },
    ]);
    expect(resolveTargets('GROUP', ['g'], new Map([fact('g', { openIntegrators: [], activeIntegrators: [] })]))).toEqual([{ id: 'g', integrator_id: null }]);
  });

  it('answers 404 for unknown ids first, then 409 for ambiguous ones, then 409 for ids without an ACTIVE device; naming each', () => {
    const facts = new Map([fact('amb', { openIntegrators: ['a', 'b'], activeIntegrators: ['a'] }), fact('idle', { activeIntegrators: [], activeDevices: 0 }), fact('ok', {})]);
    const unknown = appError(() => resolveTargets('DEVICE', ['ok', 'nope', 'amb', 'gone'], facts));
    expect([unknown.code, unknown.status]).toEqual(['NOT_FOUND', 404]);
    expect(unknown.errors.map((e) => e.path)).toEqual(['target_ids/1', 'target_ids/3']);
    const ambiguous = appError(() => resolveTargets('DEVICE', ['ok', 'idle', 'amb'], facts));
    expect([ambiguous.code, ambiguous.status]).toEqual(['CONFLICT', 409]);
    expect(ambiguous.message).toMatch(/amb is ambiguous/);
    expect(ambiguous.errors.map((e) => e.path)).toEqual(['target_ids/2']);
    const idle = appError(() => resolveTargets('SITE', ['idle', 'ok'], facts));
    expect([idle.code, idle.status]).toEqual(['CONFLICT', 409]);
    expect(idle.errors).toEqual([{ message: expect.stringMatching(/no device with an ACTIVE enrollment/), path: 'target_ids/0' }]);
    // Two integrators' ACTIVE devices under one id is ambiguous too; a GROUP id never is.
    expect(appError(() => resolveTargets('SITE', ['x'], new Map([fact('x', { openIntegrators: ['a'], activeIntegrators: ['a', 'b'] })]))).status).toBe(409);
    expect(resolveTargets('GROUP', ['x'], new Map([fact('x', { openIntegrators: ['a', 'b'] })]))).toHaveLength(1);
  });

  it('a PROGRAM event names its program; other ids are taken without repeats; the body schema guards both', () => {
    expect(targetIdsOf('PROGRAM', [], 'p')).toEqual(['p']);
    expect(targetIdsOf('DEVICE', ['a', 'b', 'a'], 'p')).toEqual(['a', 'b']);
    const action = { starts_at: T0.toISOString(), duration_s: 60, mode: 'STANDBY' };
    expect(EventCreate.safeParse({ program_id: 'p', target_type: 'PROGRAM', target_ids: ['q'], actions: [action] }).success).toBe(false);
    expect(EventCreate.safeParse({ program_id: 'p', target_type: 'SITE', target_ids: [], actions: [action] }).success).toBe(false);
    expect(EventCreate.safeParse({ program_id: 'p', target_type: 'PROGRAM', target_ids: [], actions: [action] }).success).toBe(true);
  });
});

describe('actions', () => {
  const base = { starts_at: plus(60).toISOString(), duration_s: 600 };

  it('fills in the defaults; fields that do not apply to the mode are null', () => {
    const [d, f, s] = normalizeActions(
      [
        { ...base, mode: 'DISCHARGE', setpoint_w: 5000 },
        { ...base, starts_at: plus(700).toISOString(), mode: 'CHARGE', enable_grid_import: true, backup_reserve_percentage: 80 },
        { ...base, starts_at: plus(1300).toISOString(), mode: 'BACKUP' },
      ],
      T0,
    );
    expect(d).toMatchObject({ power_mode: 'SETPOINT', setpoint_mode: 'EVEN', setpoint_w: 5000, backup_reserve_percentage: null, enable_grid_import: false, ends_at: plus(660) });
    expect(f).toMatchObject({ power_mode: 'FOLLOW_LOAD', setpoint_mode: null, setpoint_w: null, backup_reserve_percentage: 80, enable_grid_import: true });
    expect(s).toMatchObject({ power_mode: null, setpoint_mode: null, setpoint_w: null });
    expect(toApiAction(d!, 20)).toEqual({ starts_at: base.starts_at, duration_s: 600, mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_mode: 'EVEN', setpoint_w: 5000, backup_reserve_percentage: 20, enable_grid_import: false });
    expect(toApiAction(f!, 20).backup_reserve_percentage).toBe(80);
    expect(spanOf([d!, f!, s!])).toEqual({ starts_at: plus(60), ends_at: plus(1900), duration_s: 1840 });
  });

  it('refuses an action that has ended, and actions that overlap', () => {
    const past = appError(() => normalizeActions([{ ...base, mode: 'STANDBY' }, { starts_at: plus(-600).toISOString(), duration_s: 600, mode: 'STANDBY' }], T0));
    expect(past.code).toBe('VALIDATION_ERROR');
    expect(past.errors[0]!.path).toBe('actions/1/starts_at');
    // Started but not ended: accepted (the event is IN_PROGRESS at once).
    expect(normalizeActions([{ starts_at: plus(-600).toISOString(), duration_s: 601, mode: 'STANDBY' }], T0)).toHaveLength(1);
    const overlap = appError(() => normalizeActions([{ ...base, mode: 'STANDBY' }, { starts_at: plus(659).toISOString(), duration_s: 60, mode: 'BACKUP' }], T0));
    expect(overlap.errors[0]!.path).toBe('actions/1/starts_at');
    expect(normalizeActions([{ ...base, mode: 'STANDBY' }, { starts_at: plus(660).toISOString(), duration_s: 60, mode: 'BACKUP' }], T0)).toHaveLength(2);
  });

  it('the schema refuses fields that do not go with the mode or power mode', () => {
    const bad = [
      { ...base, mode: 'STANDBY', setpoint_w: 100 },
      { ...base, mode: 'BACKUP', power_mode: 'SETPOINT' },
      { ...base, mode: 'DISCHARGE', power_mode: 'SETPOINT' },
      { ...base, mode: 'CHARGE', power_mode: 'FOLLOW_LOAD', setpoint_w: 100 },
      { ...base, mode: 'CHARGE', power_mode: 'FOLLOW_LOAD', setpoint_mode: 'EVEN' },
      { ...base, mode: 'CHARGE', duration_s: 0 },
      { ...base, mode: 'CHARGE', backup_reserve_percentage: 101 },
      { ...base, mode: 'FLY' },
      { ...base, mode: 'CHARGE', extra: 1 },
    ];
    for (const a of bad) expect(EventActionCreate.safeParse(a).success, JSON.stringify(a)).toBe(false);
    expect(EventActionCreate.safeParse({ ...base, mode: 'DISCHARGE', power_mode: 'FOLLOW_LOAD' }).success).toBe(true);
  });
});

function event(over: Partial<DrEvent> = {}): DrEvent {
  const actions = normalizeActions([{ starts_at: plus(60).toISOString(), duration_s: 3600, mode: 'DISCHARGE', setpoint_w: 10_001 }], T0);
  return {
    id: 'e1', utility_id: 'u', program_id: 'p', target_type: 'PROGRAM', target_ids: ['p'], resolved_targets: null, actions, minimum_reserve_percentage: 20,
    starts_at: actions[0]!.starts_at, ends_at: actions[0]!.ends_at, status: 'UPCOMING', next_transition_at: actions[0]!.starts_at, canceled_at: null,
    commands_created_at: null, commands_announced_at: null, created_at: T0, updated_at: T0, ...over,
  };
}

const device = (site: string, id: string, outputW: number | null, reserve: number | null = null): TargetDevice => ({
  integrator_id: 'i', site_id: site, device_id: id, type: 'BATTERY',
  attributes: outputW === null ? null : { battery_power_output_w: outputW, battery_power_input_w: outputW, battery_capacity_wh: 10_000 }, reserve_percentage: reserve,
});

describe('fan-out plan', () => {
  it('one command per device and action, split in device order, with effective reserves; every site once', () => {
    let n = 0;
    const { commands, sites } = planCommands(event(), [device('s2', 'd3', 9000), device('s1', 'd2', 2000), device('s1', 'd1', null, 55)], T0, () => `c${++n}`);
    expect(commands.map((c) => [c.site_id, c.device_id, c.setpoint_w])).toEqual([
      ['s1', 'd1', 3334],
      ['s1', 'd2', 2000],
      ['s2', 'd3', 3333],
    ]);
    for (const c of commands) expect(c).toMatchObject({ status: 'OK', device_status: 'PENDING', phase: 'SCHEDULED', phase_due_at: plus(60), backup_reserve_percentage: 20, reserve_source: 'PROGRAM' });
    expect(sites.map((s) => s.site_id)).toEqual(['s1', 's2']);
    const noFloor = planCommands(event({ minimum_reserve_percentage: 0 }), [device('s1', 'd1', null, 55), device('s1', 'd2', null)], T0, () => 'x').commands;
    expect(noFloor.map((c) => [c.backup_reserve_percentage, c.reserve_source])).toEqual([
      [55, 'DEVICE'],
      [0, 'DEVICE'],
    ]);
  });

  it('a device the targets reach twice (two ACTIVE enrollments) is planned once, with one share of the split', () => {
    // A device is its integrator's id: another integrator's d1 is another device, d1 under another site the same one.
    const twice = [device('s1', 'd1', null), device('s1', 'd2', null), device('s1', 'd1', null), { ...device('s1', 'd1', null), integrator_id: 'j' }, device('s2', 'd1', null)];
    expect(distinctDevices(twice).map((d) => [d.integrator_id, d.site_id, d.device_id])).toEqual([
      ['i', 's1', 'd1'],
      ['i', 's1', 'd2'],
      ['j', 's1', 'd1'],
    ]);
    const { commands } = planCommands(event(), distinctDevices([device('s1', 'd1', null), device('s1', 'd2', null), device('s1', 'd1', null)]), T0, () => 'x');
    expect(commands.map((c) => [c.device_id, c.setpoint_w])).toEqual([
      ['d1', 5001],
      ['d2', 5000],
    ]);
  });
});

function command(over: Partial<Command> = {}): Command {
  return {
    id: 'c', event_id: 'e1', action_index: 0, utility_id: 'u', program_id: 'p', integrator_id: 'i', site_id: 's', device_id: 'd1', starts_at: plus(60), ends_at: plus(120),
    mode: 'DISCHARGE', power_mode: 'SETPOINT', setpoint_w: 1000, enable_grid_import: false, action_reserve_percentage: null, user_reserve_percentage: null,
    backup_reserve_percentage: 20, reserve_source: 'PROGRAM', status: 'OK', opted_out: false, device_status: 'PENDING', device_status_reason: null, phase: 'SCHEDULED',
    phase_due_at: plus(60), created_at: T0, updated_at: T0, ...over,
  };
}

describe('commands over time and participation', () => {
  it('statuses: CANCELED stays, OPT_OUT for a site that left or a command opted out of, else OK', () => {
    expect(commandStatus({ status: 'OK', opted_out: false }, true)).toBe('OK');
    expect(commandStatus({ status: 'OK', opted_out: false }, false)).toBe('OPT_OUT');
    expect(commandStatus({ status: 'OPT_OUT', opted_out: true }, true)).toBe('OPT_OUT');
    expect(commandStatus({ status: 'OPT_OUT', opted_out: false }, true)).toBe('OK');
    expect(commandStatus({ status: 'CANCELED', opted_out: false }, true)).toBe('CANCELED');
  });

  it('phases: started at the start, ended at the end, only while OK', () => {
    const c = command();
    expect(duePhases(c, T0)).toEqual([]);
    expect(duePhases(c, plus(60))).toEqual(['STARTED']);
    expect(duePhases(c, plus(500))).toEqual(['STARTED', 'ENDED']);
    expect(duePhases({ ...c, phase: 'STARTED' }, plus(500))).toEqual(['ENDED']);
    expect(phaseDueAt(c)).toEqual(plus(60));
    expect(phaseDueAt({ ...c, phase: 'STARTED' })).toEqual(plus(120));
    expect(phaseDueAt({ ...c, phase: 'ENDED' })).toBeNull();
    expect(phaseDueAt({ ...c, status: 'OPT_OUT' })).toBeNull();
  });

  it('a participation change touches the commands of the site that have not ended and are not canceled', () => {
    const cmds = [
      command({ id: 'running', starts_at: plus(-10), ends_at: plus(50), phase: 'STARTED' }),
      command({ id: 'ended', starts_at: plus(-100), ends_at: plus(-1), phase: 'ENDED' }),
      command({ id: 'canceled', status: 'CANCELED' }),
      command({ id: 'later', device_id: 'd2' }),
    ];
    const change = { siteParticipating: false, levels: new Map<string, number | null>(), programMinimum: 20, deviceLevels: new Map<string, number | null>(), now: T0 };
    const out = planParticipation(cmds, change);
    expect(out.map((c) => [c.id, c.status, c.phase_due_at, c.updated_at])).toEqual([
      ['running', 'OPT_OUT', null, T0],
      ['later', 'OPT_OUT', null, T0],
    ]);
    // Back in: OK again, phases resume; a command opted out on its own stays out.
    const back = planParticipation([...out, command({ id: 'alone', status: 'OPT_OUT', opted_out: true })], { ...change, siteParticipating: true });
    expect(back.map((c) => [c.id, c.status, c.phase_due_at])).toEqual([
      ['running', 'OK', plus(50)],
      ['later', 'OK', plus(60)],
    ]);
  });

  it('reserve levels: set per device, cleared back to the program or device level; unchanged commands are left out', () => {
    const cmds = [command({ id: 'a', device_id: 'd1' }), command({ id: 'b', device_id: 'd2', user_reserve_percentage: 60, backup_reserve_percentage: 60, reserve_source: 'EVENT' })];
    const base = { siteParticipating: true, programMinimum: 0, deviceLevels: new Map([['d1', 30], ['d2', 40]]), now: T0 };
    const out = planParticipation(cmds, { ...base, levels: new Map([['d1', 70], ['d2', null]]) });
    expect(out.map((c) => [c.id, c.user_reserve_percentage, c.backup_reserve_percentage, c.reserve_source])).toEqual([
      ['a', 70, 70, 'EVENT'],
      ['b', null, 40, 'DEVICE'],
    ]);
    expect(planParticipation([command({ reserve_source: 'PROGRAM' })], { ...base, programMinimum: 20, levels: new Map() })).toEqual([]);
  });

  it('the PATCH body becomes levels per device: top-level for all, device_settings after it; strangers and low levels are 400', () => {
    const levels = requestedLevels({ backup_reserve_percentage: 30, device_settings: [{ device_id: 'd2', backup_reserve_percentage: null }] }, ['d1', 'd2'], 20);
    expect([...levels]).toEqual([
      ['d1', 30],
      ['d2', null],
    ]);
    expect([...requestedLevels({ is_participating: false }, ['d1'], 20)]).toEqual([]);
    expect(appError(() => requestedLevels({ device_settings: [{ device_id: 'zz', backup_reserve_percentage: 50 }] }, ['d1'], 20)).errors[0]!.path).toBe('device_settings/0/device_id');
    expect(appError(() => requestedLevels({ backup_reserve_percentage: 10 }, ['d1'], 20)).errors[0]!.path).toBe('backup_reserve_percentage');
  });
});

describe('expected performance', () => {
  it('is setpoint × duration of the participating commands, capped by capacity, and that energy over the event', () => {
    const c = { participating: true, setpoint_w: 5000, duration_s: 3600, capacity_wh: 13_500 };
    expect(expectedPerformance([c, { ...c, setpoint_w: 2000 }], 3600)).toEqual({ energy_wh: 7000, power_w: 7000 });
    expect(expectedPerformance([{ ...c, duration_s: 4 * 3600 }], 4 * 3600)).toEqual({ energy_wh: 13_500, power_w: 3375 });
    expect(expectedPerformance([{ ...c, participating: false }], 3600)).toEqual({ energy_wh: 0, power_w: 0 });
    expect(expectedPerformance([{ ...c, setpoint_w: null }], 3600)).toEqual({ energy_wh: null, power_w: null });
  });
});

describe('settings requests', () => {
  const r: SettingsRequest = { id: 'r', integrator_id: 'i', site_id: 's', device_id: 'd', backup_reserve_percentage: 40, status: 'PENDING', status_reason: null, created_at: T0, updated_at: T0 };

  it('a PENDING request settles once; the same outcome again changes nothing; another outcome of a settled one is 409', () => {
    const applied = settle(r, 'APPLIED', null, plus(5));
    expect(applied).toEqual({ request: { ...r, status: 'APPLIED', updated_at: plus(5) }, changed: true });
    expect(settle(applied.request, 'APPLIED', null, plus(9))).toEqual({ request: applied.request, changed: false });
    expect(appError(() => settle(applied.request, 'FAILED', 'offline', plus(9))).status).toBe(409);
    expect(settle(r, 'FAILED', 'offline', plus(5)).request).toMatchObject({ status: 'FAILED', status_reason: 'offline' });
    // A FAILED request may still say why differently (the same outcome, a new reason).
    expect(settle({ ...r, status: 'FAILED', status_reason: 'offline' }, 'FAILED', 'fault', plus(5)).changed).toBe(true);
  });

  it("refuses a level below the minimum of a program the device is ACTIVE in, naming the field", () => {
    expect(() => assertAllowedLevel(20, 20)).not.toThrow();
    expect(() => assertAllowedLevel(0, null)).not.toThrow();
    const err = appError(() => assertAllowedLevel(19, 20));
    expect([err.code, err.errors[0]!.path, err.detail[0]!.loc]).toEqual(['VALIDATION_ERROR', 'settings/backup_reserve_percentage', ['body', 'settings', 'backup_reserve_percentage']]);
  });
});
