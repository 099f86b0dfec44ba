import type { EventActionCreateType, EventCreateType, EventModeType, EventType, TargetTypeType } from '@efs/api';
import { MAX_ACTION_DURATION_S } from '@efs/contracts';
import { Errors } from '@efs/errors';

/** A valuesMap of the yaml: a type and its values. */
interface ValuesMap {
  type: string;
  values: (string | number | boolean)[];
}

/** The OpenADR 3.1 `event` (objectMetadata + eventRequest) as this VTN answers it. */
export interface OpenAdrEvent {
  id: string;
  createdDateTime: string;
  modificationDateTime: string;
  objectType: 'EVENT';
  programID: string;
  eventName: null;
  priority: null;
  targets: string[] | null;
  payloadDescriptors: { objectType: 'EVENT_PAYLOAD_DESCRIPTOR'; payloadType: string; units: string | null }[];
  intervalPeriod: { start: string; duration: string };
  intervals: { id: number; intervalPeriod: { start: string; duration: string }; payloads: ValuesMap[] }[];
}

/**
 * SIMPLE levels (Definitions: 0 normal operations, 1 moderate, 2 high, 3 emergency load shed) as
 * the modes of our actions: normal is the battery serving its home, moderate shifts use away from
 * the peak, high discharges to cover the home's load, emergency keeps the battery full for backup.
 */
export const SIMPLE_LEVEL_MODES: readonly EventModeType[] = ['SELF_CONSUMPTION', 'SAVINGS', 'DISCHARGE', 'BACKUP'];

/** The private payload types that show the rest of an action (the Definitions allow privately defined types). */
export const MODE_PAYLOAD = 'EFS_MODE';
export const SETPOINT_PAYLOAD = 'EFS_SETPOINT_W';

/** A target string: our target type and id, `DEVICE:battery-1`, `SITE:home-7`, `GROUP:north`. */
const TARGET_TYPES: readonly TargetTypeType[] = ['DEVICE', 'SITE', 'GROUP'];
const targetOf = (type: TargetTypeType, id: string) => `${type}:${id}`;

const isoSeconds = (s: number) => `PT${s}S`;

/**
 * One of our events as an OpenADR event: each action an interval with its own intervalPeriod, its
 * mode as the SIMPLE level it stands for (when it is one of SIMPLE_LEVEL_MODES) and always as
 * EFS_MODE, a setpoint as EFS_SETPOINT_W; the event's intervalPeriod spans them. A PROGRAM target
 * is no targets (the whole program); other targets are `TYPE:id`.
 */
export function eventToOpenAdr(e: EventType): OpenAdrEvent {
  const types = new Set<string>();
  const intervals = e.actions.map((a, i) => {
    const payloads: ValuesMap[] = [];
    const level = SIMPLE_LEVEL_MODES.indexOf(a.mode);
    if (level >= 0) payloads.push({ type: 'SIMPLE', values: [level] });
    payloads.push({ type: MODE_PAYLOAD, values: [a.mode] });
    if (a.setpoint_w !== null) payloads.push({ type: SETPOINT_PAYLOAD, values: [a.setpoint_w] });
    for (const p of payloads) types.add(p.type);
    return { id: i, intervalPeriod: { start: a.starts_at, duration: isoSeconds(a.duration_s) }, payloads };
  });
  return {
    id: e.id,
    createdDateTime: e.created_at,
    modificationDateTime: e.updated_at,
    objectType: 'EVENT',
    programID: e.program_id,
    eventName: null,
    priority: null,
    targets: e.target_type === 'PROGRAM' ? null : e.target_ids.map((id) => targetOf(e.target_type, id)),
    payloadDescriptors: [...types].map((payloadType) => ({ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType, units: payloadType === SETPOINT_PAYLOAD ? 'W' : null })),
    intervalPeriod: { start: e.starts_at, duration: isoSeconds(e.duration_s) },
    intervals,
  };
}

/** The yaml's eventRequest, as far as this VTN reads it (the yaml's schema is checked first by our zod copy of its bounds). */
export interface OpenAdrEventRequest {
  programID: string;
  eventName?: string | null;
  priority?: number | null;
  duration?: string;
  targets?: string[] | null;
  reportDescriptors?: unknown[] | null;
  payloadDescriptors?: { objectType?: string; payloadType: string }[] | null;
  intervalPeriod?: { start?: string; duration?: string; randomizeStart?: string };
  intervals?: { id: number; intervalPeriod?: { start?: string; duration?: string; randomizeStart?: string }; payloads: { type: string; values: unknown[] }[] }[];
}

const refuse = (message: string) => Errors.VALIDATION_ERROR(message);

/**
 * An ISO 8601 duration in seconds; years and months (of no fixed length) are refused, and so is
 * one longer than an action may last (MAX_ACTION_DURATION_S): no interval of ours can be longer.
 */
export function durationSeconds(d: string, what: string): number {
  const m = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(d);
  if (!m || d === 'P' || d.endsWith('T')) throw refuse(`${what}: the duration ${d} is not one this VTN carries out (weeks, days, hours, minutes and seconds; no years or months)`);
  const [, w, days, h, min, s] = m;
  const seconds = Math.round(Number(w ?? 0) * 604800 + Number(days ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0));
  if (!(seconds <= MAX_ACTION_DURATION_S)) throw refuse(`${what}: the duration ${d} is longer than an interval may last here (${MAX_ACTION_DURATION_S} s)`);
  return seconds;
}

/** "0001-01-01" (with or without a time) means now (User Guide). */
const NOW_START = /^0001-01-01(T00:00:00(\.0+)?(Z|[+-]00:00)?)?$/;

/**
 * An OpenADR eventRequest with SIMPLE payloads as our event: each interval an action (its own
 * intervalPeriod, else the event's, an interval without a start following the one before), its
 * SIMPLE level the mode of SIMPLE_LEVEL_MODES; targets `TYPE:id` of one type, none the whole
 * program. Whatever it cannot carry out is refused with 400 naming it: another payload type, an
 * event `duration` (looping), reportDescriptors, randomizeStart, mixed or unknown targets.
 */
export function eventFromOpenAdr(r: OpenAdrEventRequest, now = new Date()): EventCreateType {
  if (r.duration !== undefined && durationSeconds(r.duration, 'duration') !== 0) throw refuse('duration: looping an event over its intervals is not supported; give each interval its intervalPeriod');
  if (r.reportDescriptors && r.reportDescriptors.length > 0) throw refuse('reportDescriptors: report requests are not supported yet');
  for (const d of r.payloadDescriptors ?? []) if (d.payloadType !== 'SIMPLE') throw refuse(`payloadDescriptors: the payload type ${d.payloadType} is not carried out by this VTN (SIMPLE is)`);
  if (!r.intervals || r.intervals.length === 0) throw refuse('intervals: at least one interval is required');

  let target_type: TargetTypeType = 'PROGRAM';
  let target_ids: string[] = [r.programID];
  if (r.targets && r.targets.length > 0) {
    const parsed = r.targets.map((t) => {
      const colon = t.indexOf(':');
      const type = t.slice(0, colon) as TargetTypeType;
      if (colon < 1 || !TARGET_TYPES.includes(type) || colon === t.length - 1) throw refuse(`targets: ${t} is not DEVICE:id, SITE:id or GROUP:id`);
      return { type, id: t.slice(colon + 1) };
    });
    const types = new Set(parsed.map((p) => p.type));
    if (types.size > 1) throw refuse(`targets: one event targets one kind of target, not ${[...types].join(' and ')}`);
    target_type = parsed[0]!.type;
    target_ids = parsed.map((p) => p.id);
  }

  const startOf = (s: string) => {
    if (NOW_START.test(s)) return now.toISOString();
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) || Number.isNaN(Date.parse(s))) throw refuse(`intervalPeriod.start: ${s} is not an RFC 3339 date-time`);
    return new Date(s).toISOString();
  };
  let previousEnd: number | undefined;
  const actions: EventActionCreateType[] = r.intervals.map((interval, i) => {
    const where = `intervals[${i}]`;
    const period = { ...r.intervalPeriod, ...interval.intervalPeriod };
    if (period.randomizeStart !== undefined && durationSeconds(period.randomizeStart, `${where}.intervalPeriod.randomizeStart`) !== 0) throw refuse(`${where}: randomizeStart is not supported`);
    const ownStart = interval.intervalPeriod?.start;
    const start = ownStart !== undefined ? startOf(ownStart) : i === 0 || previousEnd === undefined ? (period.start !== undefined ? startOf(period.start) : undefined) : new Date(previousEnd).toISOString();
    if (start === undefined) throw refuse(`${where}: no start (give the event or the interval an intervalPeriod.start)`);
    if (period.duration === undefined) throw refuse(`${where}: no duration (give the event or the interval an intervalPeriod.duration)`);
    const seconds = durationSeconds(period.duration, `${where}.intervalPeriod.duration`);
    if (seconds < 1) throw refuse(`${where}: the duration must be at least a second`);
    previousEnd = new Date(start).getTime() + seconds * 1000;
    const other = interval.payloads.find((p) => p.type !== 'SIMPLE');
    if (other) throw refuse(`${where}: the payload type ${other.type} is not carried out by this VTN (SIMPLE is)`);
    const simple = interval.payloads.filter((p) => p.type === 'SIMPLE');
    if (simple.length !== 1) throw refuse(`${where}: exactly one SIMPLE payload is required`);
    const level = simple[0]!.values;
    if (level.length !== 1 || !Number.isInteger(level[0]) || (level[0] as number) < 0 || (level[0] as number) > 3) throw refuse(`${where}: a SIMPLE payload is one integer from 0 to 3`);
    return { starts_at: start, duration_s: seconds, mode: SIMPLE_LEVEL_MODES[level[0] as number]! };
  });
  return { program_id: r.programID, target_type, target_ids, actions };
}
