import { POWER_MODES, type EventActionCreateType, type EventActionType, type EventModeType, type PowerModeType, type SetpointModeType } from '@efs/api';
import { Errors } from '@efs/errors';

/** An action as the service keeps it: defaults applied, the reserve kept only when the utility gave it. */
export interface Action {
  starts_at: Date;
  ends_at: Date;
  duration_s: number;
  mode: EventModeType;
  power_mode: PowerModeType | null;
  setpoint_mode: SetpointModeType | null;
  setpoint_w: number | null;
  /** The utility's level for this action; null when not given (the program's minimum then applies). */
  backup_reserve_percentage: number | null;
  enable_grid_import: boolean;
}

/** The action as stored (JSON) and read back. */
export interface StoredAction extends Omit<Action, 'starts_at' | 'ends_at'> {
  starts_at: string;
  ends_at: string;
}

const invalid = (index: number, field: string, message: string) =>
  Errors.VALIDATION_ERROR(`Invalid body: actions.${index}.${field}: ${message}`, {
    detail: [{ loc: ['body', 'actions', String(index), field], msg: message, type: 'custom' }],
    errors: [{ message, path: `actions/${index}/${field}` }],
  });

/**
 * The actions of a new event with their defaults (the schema checked each field and how fields go
 * with modes): CHARGE and DISCHARGE get a power mode (SETPOINT with a setpoint, FOLLOW_LOAD
 * without) and SETPOINT gets EVEN; other modes have none of the three. Refused (400): an action
 * that ends at or before `now`, and actions that overlap (a device cannot do two at once).
 */
export function normalizeActions(input: readonly EventActionCreateType[], now: Date): Action[] {
  const actions = input.map((a, i): Action => {
    const starts = new Date(a.starts_at);
    const ends = new Date(starts.getTime() + a.duration_s * 1000);
    if (ends.getTime() <= now.getTime()) throw invalid(i, 'starts_at', `The action ends in the past (${ends.toISOString()})`);
    const powered = POWER_MODES.includes(a.mode);
    const powerMode = powered ? (a.power_mode ?? (a.setpoint_w != null ? 'SETPOINT' : 'FOLLOW_LOAD')) : null;
    return {
      starts_at: starts,
      ends_at: ends,
      duration_s: a.duration_s,
      mode: a.mode,
      power_mode: powerMode,
      setpoint_mode: powerMode === 'SETPOINT' ? (a.setpoint_mode ?? 'EVEN') : null,
      setpoint_w: powerMode === 'SETPOINT' ? (a.setpoint_w ?? null) : null,
      backup_reserve_percentage: a.backup_reserve_percentage ?? null,
      enable_grid_import: a.enable_grid_import ?? false,
    };
  });
  const byStart = actions.map((a, i) => ({ a, i })).sort((x, y) => x.a.starts_at.getTime() - y.a.starts_at.getTime());
  for (let k = 1; k < byStart.length; k++) {
    const prev = byStart[k - 1]!;
    const cur = byStart[k]!;
    if (cur.a.starts_at.getTime() < prev.a.ends_at.getTime()) throw invalid(cur.i, 'starts_at', `The action overlaps action ${prev.i}, which ends at ${prev.a.ends_at.toISOString()}`);
  }
  return actions;
}

/** Where an event's actions begin and end. */
export function spanOf(actions: readonly Pick<Action, 'starts_at' | 'ends_at'>[]): { starts_at: Date; ends_at: Date; duration_s: number } {
  const starts = Math.min(...actions.map((a) => a.starts_at.getTime()));
  const ends = Math.max(...actions.map((a) => a.ends_at.getTime()));
  return { starts_at: new Date(starts), ends_at: new Date(ends), duration_s: Math.round((ends - starts) / 1000) };
}

/** The action as every response shows it; an unset reserve shows the program's minimum it defaults to. */
export function toApiAction(a: Action, programMinimum: number): EventActionType {
  return {
    starts_at: a.starts_at.toISOString(),
    duration_s: a.duration_s,
    mode: a.mode,
    power_mode: a.power_mode,
    setpoint_mode: a.setpoint_mode,
    setpoint_w: a.setpoint_w,
    backup_reserve_percentage: a.backup_reserve_percentage ?? programMinimum,
    enable_grid_import: a.enable_grid_import,
  };
}

export const storeAction = (a: Action): StoredAction => ({ ...a, starts_at: a.starts_at.toISOString(), ends_at: a.ends_at.toISOString() });
export const loadAction = (a: StoredAction): Action => ({ ...a, starts_at: new Date(a.starts_at), ends_at: new Date(a.ends_at) });
