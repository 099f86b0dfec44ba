import type { TargetTypeType } from '@efs/api';
import { Errors } from '@efs/errors';

/** What the read model knows of one target id within the event's program. */
export interface TargetFacts {
  id: string;
  /** Named by an enrollment of the program in any status (SITE, DEVICE), a group of the program (GROUP), the program itself (PROGRAM). */
  known: boolean;
  /** Integrators whose PENDING, NEEDS_ACTION or ACTIVE enrollments in the program name this id (SITE, DEVICE). */
  openIntegrators: readonly string[];
  /** Integrators with an ACTIVE, not deleted device under this id. */
  activeIntegrators: readonly string[];
  /** ACTIVE, not deleted devices this id reaches. */
  activeDevices: number;
}

/** A target as the fan-out resolves it: SITE and DEVICE ids pinned to the one integrator they belong to. */
export interface ResolvedTarget {
  id: string;
  integrator_id: string | null;
}

const issue = (i: number, message: string) => ({ message, path: `target_ids/${i}` });
const detail = (i: number, message: string, type: string) => ({ loc: ['body', 'target_ids', String(i)], msg: message, type });

/**
 * The targets of a new event, checked in the order decisions.md gives: an id the program does
 * not know is 404; a SITE or DEVICE id whose devices belong to more than one integrator is
 * ambiguous (409, never guessed); an id that reaches no device with an ACTIVE enrollment is 409.
 * Every offending id is named. `facts` has one entry per id (missing means unknown).
 */
export function resolveTargets(type: TargetTypeType, ids: readonly string[], facts: ReadonlyMap<string, TargetFacts>): ResolvedTarget[] {
  const what = { DEVICE: 'Device', SITE: 'Site', GROUP: 'Group', PROGRAM: 'Program' }[type];
  const unknown: number[] = [];
  const ambiguous: number[] = [];
  const inactive: number[] = [];
  ids.forEach((id, i) => {
    const f = facts.get(id);
    if (!f || !f.known) unknown.push(i);
    else if ((type === 'SITE' || type === 'DEVICE') && new Set([...f.openIntegrators, ...f.activeIntegrators]).size > 1) ambiguous.push(i);
    else if (f.activeDevices === 0) inactive.push(i);
  });
  if (unknown.length > 0) {
    const msg = (i: number) => `${what} ${ids[i]} is not known in this program`;
    throw Errors.NOT_FOUND(`${unknown.map(msg).join('; ')}`, { errors: unknown.map((i) => issue(i, msg(i))), detail: unknown.map((i) => detail(i, msg(i), 'not_found')) });
  }
  if (ambiguous.length > 0) {
    const msg = (i: number) => `${what} id ${ids[i]} is ambiguous: devices of more than one integrator in the program use it`;
    throw Errors.CONFLICT(`${ambiguous.map(msg).join('; ')}`, { errors: ambiguous.map((i) => issue(i, msg(i))), detail: ambiguous.map((i) => detail(i, msg(i), 'ambiguous')) });
  }
  if (inactive.length > 0) {
    const msg = (i: number) => `${what} ${ids[i]} reaches no device with an ACTIVE enrollment in the program`;
    throw Errors.CONFLICT(`${inactive.map(msg).join('; ')}`, { errors: inactive.map((i) => issue(i, msg(i))), detail: inactive.map((i) => detail(i, msg(i), 'no_active_enrollment')) });
  }
  return ids.map((id) => ({ id, integrator_id: type === 'SITE' || type === 'DEVICE' ? (facts.get(id)!.activeIntegrators[0] ?? null) : null }));
}

/** The ids an event targets: a PROGRAM event always names its program, a list is taken without repeats. */
export function targetIdsOf(type: TargetTypeType, ids: readonly string[], programId: string): string[] {
  return type === 'PROGRAM' ? [programId] : [...new Set(ids)];
}

/**
 * The devices the targets resolved to, each once (the first of its rows kept). A device can be in
 * two ACTIVE enrollments of the program at once in the read model (the newer one's approval
 * applied before the older one's end: messages of different enrollments are not ordered); it
 * would otherwise be counted twice in an EVEN split and its second command dropped, the shares
 * then falling short of the setpoint. A device is its integrator's id (unique per integrator, the
 * key of an event's commands), whatever site an enrollment names it under.
 */
export function distinctDevices<T extends { integrator_id: string; device_id: string }>(devices: readonly T[]): T[] {
  const seen = new Set<string>();
  return devices.filter((d) => {
    // Ids are free text; Postgres text never holds NUL.
    const key = `${d.integrator_id}\u0000${d.device_id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
