import { describe, expect, it } from 'vitest';
import type { EventType } from '@efs/api';
import { durationSeconds, eventFromOpenAdr, eventToOpenAdr, SIMPLE_LEVEL_MODES } from '../src/openadr/eventMapping.ts';

const simple = (level: number) => ({ type: 'SIMPLE', values: [level] });

describe('OpenADR event mapping', () => {
  it('reads ISO 8601 durations in weeks, days, hours, minutes and seconds; refuses years, months and empty ones', () => {
    expect(durationSeconds('PT1H', 'd')).toBe(3600);
    expect(durationSeconds('P1DT30M', 'd')).toBe(86400 + 1800);
    expect(durationSeconds('P1W', 'd')).toBe(604800);
    expect(durationSeconds('PT1.5S', 'd')).toBe(2);
    expect(durationSeconds('PT0S', 'd')).toBe(0);
    for (const bad of ['P1Y', 'P1M', 'P9999Y', 'P', 'PT', '1H', '-PT1H']) expect(() => durationSeconds(bad, 'd'), bad).toThrow(/not one this VTN carries out/);
    // Longer than an action may last: refused, however many digits (an interval chained after it would start past any date).
    for (const long of ['P100000000D', `P${'9'.repeat(60)}W`, 'PT604801S']) expect(() => durationSeconds(long, 'd'), long).toThrow(/longer than an interval may last/);
    expect(durationSeconds('P7D', 'd')).toBe(604800);
  });

  it('chains intervals without a start after the one before, each with its own or the event duration', () => {
    const e = eventFromOpenAdr({
      programID: 'p',
      intervalPeriod: { start: '2030-01-01T10:00:00Z', duration: 'PT15M' },
      intervals: [{ id: 0, payloads: [simple(1)] }, { id: 1, intervalPeriod: { duration: 'PT1H' }, payloads: [simple(2)] }, { id: 2, payloads: [simple(0)] }, { id: 3, intervalPeriod: { start: '2030-01-01T18:00:00+02:00' }, payloads: [simple(3)] }],
    });
    expect(e).toEqual({
      program_id: 'p',
      target_type: 'PROGRAM',
      target_ids: ['p'],
      actions: [
        { starts_at: '2030-01-01T10:00:00.000Z', duration_s: 900, mode: 'SAVINGS' },
        { starts_at: '2030-01-01T10:15:00.000Z', duration_s: 3600, mode: 'DISCHARGE' },
        { starts_at: '2030-01-01T11:15:00.000Z', duration_s: 900, mode: 'SELF_CONSUMPTION' },
        { starts_at: '2030-01-01T16:00:00.000Z', duration_s: 900, mode: 'BACKUP' },
      ],
    });
  });

  it('turns TYPE:id targets into one target type and refuses what it cannot carry out, naming it', () => {
    const base = { programID: 'p', intervalPeriod: { start: '2030-01-01T10:00:00Z', duration: 'PT15M' }, intervals: [{ id: 0, payloads: [simple(1)] }] };
    expect(eventFromOpenAdr({ ...base, targets: ['GROUP:north', 'GROUP:south'] })).toMatchObject({ target_type: 'GROUP', target_ids: ['north', 'south'] });
    expect(eventFromOpenAdr({ ...base, targets: ['DEVICE:a:b'] })).toMatchObject({ target_type: 'DEVICE', target_ids: ['a:b'] });
    const refused: [object, RegExp][] = [
      [{ ...base, targets: ['SITE:'] }, /SITE:/],
      [{ ...base, targets: ['PROGRAM:p'] }, /PROGRAM:p/],
      [{ ...base, duration: 'PT1H' }, /looping/],
      [{ ...base, reportDescriptors: [{}] }, /reportDescriptors/],
      [{ ...base, intervalPeriod: { ...base.intervalPeriod, randomizeStart: 'PT5M' } }, /randomizeStart/],
      [{ ...base, intervalPeriod: { start: 'tomorrow', duration: 'PT1H' } }, /tomorrow/],
      [{ ...base, intervalPeriod: { duration: 'PT1H' } }, /no start/],
      [{ ...base, intervalPeriod: { start: '2030-01-01T10:00:00Z' } }, /no duration/],
      [{ ...base, intervals: [{ id: 0, payloads: [simple(1), simple(2)] }] }, /exactly one SIMPLE/],
      [{ ...base, intervals: [{ id: 0, payloads: [{ type: 'SIMPLE', values: [1.5] }] }] }, /one integer from 0 to 3/],
      [{ ...base, intervals: [{ id: 0, payloads: [{ type: 'CHARGE_STATE_SETPOINT', values: [80] }] }] }, /CHARGE_STATE_SETPOINT/],
    ];
    for (const [body, message] of refused) expect(() => eventFromOpenAdr(body as Parameters<typeof eventFromOpenAdr>[0]), message.source).toThrow(message);
  });

  it('shows our event with its SIMPLE level where its mode has one, and always EFS_MODE', () => {
    const action = (mode: EventType['actions'][number]['mode'], setpoint_w: number | null = null) => ({ starts_at: '2030-01-01T10:00:00.000Z', duration_s: 600, mode, power_mode: null, setpoint_mode: null, setpoint_w, backup_reserve_percentage: null, enable_grid_import: null });
    const event: EventType = {
      id: '6f1b2b7e-5d0c-4b8a-9a4e-0c1d2e3f4a5b',
      program_id: 'p',
      target_type: 'SITE',
      target_ids: ['home-1'],
      actions: [...SIMPLE_LEVEL_MODES.map((m) => action(m)), action('CHARGE', 3000)],
      status: 'UPCOMING',
      starts_at: '2030-01-01T10:00:00.000Z',
      ends_at: '2030-01-01T10:10:00.000Z',
      duration_s: 600,
      created_at: '2029-12-31T10:00:00.000Z',
      updated_at: '2029-12-31T10:00:00.000Z',
    };
    const o = eventToOpenAdr(event);
    expect(o.targets).toEqual(['SITE:home-1']);
    expect(o.intervals.map((i) => i.payloads.find((p) => p.type === 'SIMPLE')?.values[0])).toEqual([0, 1, 2, 3, undefined]);
    expect(o.intervals[4]!.payloads).toEqual([{ type: 'EFS_MODE', values: ['CHARGE'] }, { type: 'EFS_SETPOINT_W', values: [3000] }]);
    expect(o.payloadDescriptors.map((d) => d.payloadType)).toEqual(['SIMPLE', 'EFS_MODE', 'EFS_SETPOINT_W']);
    expect(o.intervalPeriod).toEqual({ start: '2030-01-01T10:00:00.000Z', duration: 'PT600S' });
  });
});
