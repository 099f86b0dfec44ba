import type { DeviceTypeType, ProgramType } from '@efs/api';

export interface Rates {
  upfront_per_kwh: number;
  upfront_per_device: number;
  yearly_per_kw: number;
  yearly_per_device: number;
}

export interface FormItem {
  name: string;
  label: string;
  type: 'string' | 'number' | 'boolean';
  hint: string;
}

/** A program as the catalog keeps it. */
export interface Program {
  id: string;
  utility_id: string;
  name: string;
  description: string;
  eligible_device_types: DeviceTypeType[];
  zip_codes: string[];
  can_auto_enroll: boolean;
  minimum_reserve_percentage: number;
  minimum_commitment_months: number | null;
  participation_months: number[];
  rates: Rates;
  enrollment_form: FormItem[];
  terms_and_conditions_version: string | null;
  terms_and_conditions_text: string | null;
  auto_approve_after_ms: number | null;
  created_at: Date;
  updated_at: Date;
}

/** What earnings are estimated from: a site's devices as commissioned. */
export interface SizedDevice {
  type: DeviceTypeType;
  attributes: Record<string, unknown>;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Power that a device offers the grid, in kW: a battery's discharge power, a charger's charging power. */
export function devicePowerKw(d: SizedDevice): number {
  if (d.type === 'BATTERY') return num(d.attributes.battery_power_output_w) / 1000;
  return num(d.attributes.max_charge_power_w) / 1000;
}

export function deviceCapacityKwh(d: SizedDevice): number {
  return d.type === 'BATTERY' ? num(d.attributes.battery_capacity_wh) / 1000 : 0;
}

/** The program covers the zip code (no zip code means no filter). */
export function coversZip(p: Pick<Program, 'zip_codes'>, zip: string | null | undefined): boolean {
  return zip === undefined || zip === null || p.zip_codes.includes(zip);
}

export function acceptsDeviceType(p: Pick<Program, 'eligible_device_types'>, type: DeviceTypeType | undefined): boolean {
  return type === undefined || p.eligible_device_types.includes(type);
}

/**
 * Estimated earnings of a site in a program: the rates applied to the site's eligible devices,
 * rounded to whole currency units. A site without eligible devices earns nothing.
 */
export function estimateEarnings(p: Pick<Program, 'rates' | 'eligible_device_types'>, devices: readonly SizedDevice[]): { upfront: number; yearly: number } {
  let upfront = 0;
  let yearly = 0;
  for (const d of devices) {
    if (!p.eligible_device_types.includes(d.type)) continue;
    upfront += p.rates.upfront_per_device + deviceCapacityKwh(d) * p.rates.upfront_per_kwh;
    yearly += p.rates.yearly_per_device + devicePowerKw(d) * p.rates.yearly_per_kw;
  }
  return { upfront: Math.round(upfront), yearly: Math.round(yearly) };
}

/** The API view of a program (the specification's 15 fields) for a site's devices. */
export function toApiProgram(p: Program, devices: readonly SizedDevice[] = []): ProgramType {
  const earnings = estimateEarnings(p, devices);
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    eligible_device_types: [...p.eligible_device_types],
    can_auto_enroll: p.can_auto_enroll,
    minimum_reserve_percentage: p.minimum_reserve_percentage,
    minimum_commitment_months: p.minimum_commitment_months,
    participation_months: [...p.participation_months],
    earnings_for_site_upfront: earnings.upfront,
    earnings_for_site_yearly: earnings.yearly,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
    enrollment_form: p.enrollment_form.map((f) => ({ ...f })),
    terms_and_conditions_version: p.terms_and_conditions_version,
    terms_and_conditions_text: p.terms_and_conditions_text,
  };
}

/** The distinct device types of a site's devices, in first-seen order. */
export function deviceTypesOf(devices: readonly { type: DeviceTypeType }[]): DeviceTypeType[] {
  return [...new Set(devices.map((d) => d.type))];
}

/**
 * Whether a program is available to a site: it covers the site's zip code (a site without one
 * has no programs yet) and accepts at least one of the given device types; with no device types
 * (a site without devices) the zip code alone decides. Commissioning and the site's program list
 * both use this rule; earnings then count only the devices the program accepts.
 */
export function isEligible(p: Pick<Program, 'zip_codes' | 'eligible_device_types'>, zip: string | null | undefined, deviceTypes: readonly DeviceTypeType[]): boolean {
  if (zip === undefined || zip === null || !p.zip_codes.includes(zip)) return false;
  return deviceTypes.length === 0 || deviceTypes.some((t) => p.eligible_device_types.includes(t));
}
