import type { DeviceTypeType } from '@efs/api';
import { phaseDueAt, type Command } from './command.ts';
import type { DrEvent, EventSiteRow } from './event.ts';
import { effectiveReserve } from './reserve.ts';
import { evenSplit, ratedPowerW } from './split.ts';

/** A device a target resolved to, with what its commands are computed from (read model). */
export interface TargetDevice {
  integrator_id: string;
  site_id: string;
  device_id: string;
  /** Null when the device read model has not seen the device yet (its power is then not capped). */
  type: DeviceTypeType | null;
  attributes: Record<string, number> | null;
  reserve_percentage: number | null;
}

const order = (a: TargetDevice, b: TargetDevice) =>
  a.integrator_id.localeCompare(b.integrator_id) || a.site_id.localeCompare(b.site_id) || a.device_id.localeCompare(b.device_id);

/**
 * The commands of an event: one per device and action, in a stable device order (which decides
 * who gets the remainder watts of an EVEN split), each with its share of the action's setpoint and
 * its effective reserve; plus the sites they reach, all participating.
 */
export function planCommands(e: DrEvent, devices: readonly TargetDevice[], now: Date, newId: () => string): { commands: Command[]; sites: EventSiteRow[] } {
  const sorted = [...devices].sort(order);
  const commands: Command[] = [];
  e.actions.forEach((a, index) => {
    const shares = a.setpoint_w === null ? null : evenSplit(a.setpoint_w, sorted.map((d) => ratedPowerW(d, a.mode)));
    sorted.forEach((d, i) => {
      const reserve = effectiveReserve({ eventLevel: null, actionLevel: a.backup_reserve_percentage, programMinimum: e.minimum_reserve_percentage, deviceLevel: d.reserve_percentage });
      const c: Command = {
        id: newId(),
        event_id: e.id,
        action_index: index,
        utility_id: e.utility_id,
        program_id: e.program_id,
        integrator_id: d.integrator_id,
        site_id: d.site_id,
        device_id: d.device_id,
        starts_at: a.starts_at,
        ends_at: a.ends_at,
        mode: a.mode,
        power_mode: a.power_mode,
        setpoint_w: shares === null ? null : shares[i]!,
        enable_grid_import: a.enable_grid_import,
        action_reserve_percentage: a.backup_reserve_percentage,
        user_reserve_percentage: null,
        backup_reserve_percentage: reserve.percentage,
        reserve_source: reserve.source,
        status: 'OK',
        opted_out: false,
        device_status: 'PENDING',
        device_status_reason: null,
        phase: 'SCHEDULED',
        phase_due_at: null,
        created_at: now,
        updated_at: now,
      };
      c.phase_due_at = phaseDueAt(c);
      commands.push(c);
    });
  });
  const sites = new Map<string, EventSiteRow>();
  for (const d of sorted) {
    const key = `${d.integrator_id}\u0000${d.site_id}`;
    if (!sites.has(key)) sites.set(key, { event_id: e.id, integrator_id: d.integrator_id, site_id: d.site_id, is_participating: true, created_at: now, updated_at: now });
  }
  return { commands, sites: [...sites.values()] };
}
