import type { DeviceTypeType } from '@efs/api';

interface EligibleProgram {
  id: string;
  can_auto_enroll: boolean;
  eligible_device_types: readonly DeviceTypeType[];
}

/**
 * Which program a commissioning auto-enrolls into, and with which devices: only when the
 * homeowner agreed beforehand (`can_auto_enroll` of the request), the first eligible program (in
 * catalog order) that permits auto-enrollment, with the devices whose type it accepts.
 */
export function autoEnrollChoice<D extends { type: DeviceTypeType }>(
  requested: boolean,
  programs: readonly EligibleProgram[],
  devices: readonly D[],
): { programId: string; devices: D[] } | undefined {
  if (!requested) return undefined;
  for (const p of programs) {
    if (!p.can_auto_enroll) continue;
    const accepted = devices.filter((d) => p.eligible_device_types.includes(d.type));
    if (accepted.length > 0) return { programId: p.id, devices: accepted };
  }
  return undefined;
}
