import type { DeviceTypeType, EventModeType } from '@efs/api';

/**
 * The most a device can take (CHARGE) or give (DISCHARGE), from its attributes: a battery's
 * `battery_power_input_w` / `battery_power_output_w`, an EV charger's `max_charge_power_w` when
 * charging. Null when unknown (no cap); 0 for a charger asked to discharge.
 */
export function ratedPowerW(device: { type: DeviceTypeType | null; attributes: Record<string, number> | null }, mode: EventModeType): number | null {
  const attr = (name: string) => {
    const v = device.attributes?.[name];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
  };
  if (device.type === 'EV_CHARGER') {
    if (mode === 'CHARGE') return attr('max_charge_power_w');
    if (mode === 'DISCHARGE') return 0;
    return null;
  }
  if (mode === 'CHARGE') return attr('battery_power_input_w');
  if (mode === 'DISCHARGE') return attr('battery_power_output_w');
  return null;
}

/**
 * EVEN split (decisions.md): `totalW` shared over the devices in integer watts, the remainder of
 * the division going one watt each to the first devices, so the shares sum to exactly `totalW`;
 * then each share is capped by the device's rated power (`caps[i]`, null = no cap). Integer
 * arithmetic only on values the API bounds to safe integers, so nothing overflows or rounds.
 */
export function evenSplit(totalW: number, caps: readonly (number | null)[]): number[] {
  if (!Number.isSafeInteger(totalW) || totalW < 0) throw new RangeError(`setpoint must be a non-negative safe integer, got ${totalW}`);
  const n = caps.length;
  if (n === 0) return [];
  const base = Math.floor(totalW / n);
  const remainder = totalW - base * n;
  return caps.map((cap, i) => {
    const share = base + (i < remainder ? 1 : 0);
    return cap === null ? share : Math.min(share, cap);
  });
}
