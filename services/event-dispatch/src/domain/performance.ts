/** One command of a site as the expected performance counts it. */
export interface PerformanceInput {
  participating: boolean;
  setpoint_w: number | null;
  duration_s: number;
  /** The battery's capacity, the most one command can move; null when unknown. */
  capacity_wh: number | null;
}

/**
 * Expected performance of a site in an event (decisions.md, Telemetry): the energy of its
 * participating commands, setpoint × duration, each capped by the battery's capacity; the power
 * is that energy over the event's duration. Null when no command of the site has a setpoint
 * (FOLLOW_LOAD and modes without power say nothing about energy).
 */
export function expectedPerformance(commands: readonly PerformanceInput[], eventDurationS: number): { energy_wh: number | null; power_w: number | null } {
  const measurable = commands.filter((c) => c.setpoint_w !== null);
  if (measurable.length === 0) return { energy_wh: null, power_w: null };
  let energy = 0;
  for (const c of measurable) {
    if (!c.participating) continue;
    const wh = (c.setpoint_w! * c.duration_s) / 3600;
    energy += c.capacity_wh === null ? wh : Math.min(wh, c.capacity_wh);
  }
  const power = eventDurationS > 0 ? (energy * 3600) / eventDurationS : 0;
  return { energy_wh: Math.round(energy), power_w: Math.round(power) };
}
