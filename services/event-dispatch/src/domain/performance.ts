import type { Command } from './command.ts';

/** One command of a site as the expected performance counts it. */
export interface PerformanceInput {
  participating: boolean;
  setpoint_w: number | null;
  duration_s: number;
  /** The battery's capacity, the most one command can move; null when unknown. */
  capacity_wh: number | null;
}

export interface SiteFigures {
  energy_wh: number | null;
  power_w: number | null;
}

/**
 * A figure as the API answers it: whole watt-hours or watts, saturating at the largest integer a
 * JSON reader holds exactly (±9,007,199,254,740,991), never Infinity or an unsafe integer.
 */
export function wholeFigure(x: number): number {
  if (Number.isNaN(x)) throw new Error('a performance figure is not a number');
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.round(x)));
}

/** Energy over the event's duration as average power (0 for an event of no duration). */
const averagePower = (energyWh: number, eventDurationS: number): number => (eventDurationS > 0 ? (energyWh / eventDurationS) * 3600 : 0);

/**
 * Expected performance of a site in an event (decisions.md, Telemetry): the energy of its
 * participating commands, setpoint × duration, each capped by the battery's capacity; the power
 * is that energy over the event's duration. Null when no command of the site has a setpoint
 * (FOLLOW_LOAD and modes without power say nothing about energy).
 */
export function expectedPerformance(commands: readonly PerformanceInput[], eventDurationS: number): SiteFigures {
  const measurable = commands.filter((c) => c.setpoint_w !== null);
  if (measurable.length === 0) return { energy_wh: null, power_w: null };
  let energy = 0;
  for (const c of measurable) {
    if (!c.participating) continue;
    // Setpoints and durations are bounded (10 GW, a week): each term is at most ~1.7e12 Wh.
    const wh = (c.setpoint_w! / 3600) * c.duration_s;
    energy += c.capacity_wh === null ? wh : Math.min(wh, c.capacity_wh);
  }
  return { energy_wh: wholeFigure(energy), power_w: wholeFigure(averagePower(energy, eventDurationS)) };
}

/**
 * Actual performance of a site: what its devices delivered in the windows of their participating
 * commands (from telemetry, one figure per device, null when telemetry covers none of them),
 * over the event's duration like the expected power. Null when no device has telemetry there.
 */
export function actualPerformance(deviceEnergies: readonly (number | null)[], eventDurationS: number): SiteFigures {
  const known = deviceEnergies.filter((e): e is number => e !== null);
  if (known.length === 0) return { energy_wh: null, power_w: null };
  const energy = known.reduce((a, e) => a + e, 0);
  return { energy_wh: wholeFigure(energy), power_w: wholeFigure(averagePower(energy, eventDurationS)) };
}

/** A window of an event's action as telemetry is asked about it. */
export interface DeliveryWindow {
  starts_at: string;
  ends_at: string;
  mode: 'CHARGE' | 'DISCHARGE';
}

/** A device and the windows (indices) of its participating commands. */
export interface DeliveryDevice {
  integrator_id: string;
  site_id: string;
  device_id: string;
  windows: number[];
}

/**
 * What to ask telemetry about: the windows of the participating (OK) CHARGE and DISCHARGE
 * commands, each once, and per device the windows it took part in. Other modes have no direction
 * to measure; an opted-out or canceled command delivered nothing it was asked for.
 */
export function deliveryQuestion(commands: readonly Command[]): { windows: DeliveryWindow[]; devices: DeliveryDevice[] } {
  const windows: DeliveryWindow[] = [];
  const windowIndex = new Map<string, number>();
  const devices = new Map<string, DeliveryDevice>();
  for (const c of commands) {
    if (c.status !== 'OK' || (c.mode !== 'CHARGE' && c.mode !== 'DISCHARGE')) continue;
    const w: DeliveryWindow = { starts_at: c.starts_at.toISOString(), ends_at: c.ends_at.toISOString(), mode: c.mode };
    const wk = `${w.starts_at}/${w.ends_at}/${w.mode}`;
    let i = windowIndex.get(wk);
    if (i === undefined) windowIndex.set(wk, (i = windows.push(w) - 1));
    const dk = `${c.integrator_id}\u0000${c.site_id}\u0000${c.device_id}`;
    const d = devices.get(dk) ?? { integrator_id: c.integrator_id, site_id: c.site_id, device_id: c.device_id, windows: [] };
    if (!d.windows.includes(i)) d.windows.push(i);
    devices.set(dk, d);
  }
  return { windows, devices: [...devices.values()] };
}
