import { EARNINGS_MAX, IntegratorProgramFields, type ProgramFields, toWire, zipArea, type DomainOf } from '@efs/contracts';
import type { DeviceTypeType } from './common.ts';
import type { ProgramType } from './programs.ts';

/*
 * Which programs a site is eligible for and what it would earn in them: the catalog's rules, here
 * because two services apply them to the same programs. The catalog answers its own reads with
 * them; commissioning answers a commission's eligibility with them from its read model of the
 * programs topic, and the answer must be the catalog's to the byte.
 */

/** A program as the catalog keeps it and announces it (timestamps as Date), and as commissioning reads it from the programs topic. */
export type ProgramRecord = DomainOf<typeof ProgramFields>;

type Program = ProgramRecord;

/** What earnings are estimated from: a site's devices as commissioned. */
export interface SizedDevice {
  type: DeviceTypeType;
  attributes: Record<string, unknown>;
}

/** An attribute or rate as an exact integer; what is not a finite number counts as nothing. */
const units = (v: unknown): bigint => (typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n);

/** Power that a device offers the grid, in W: a battery's discharge power, a charger's charging power. */
const devicePowerW = (d: SizedDevice): bigint => units(d.type === 'BATTERY' ? d.attributes.battery_power_output_w : d.attributes.max_charge_power_w);

const deviceCapacityWh = (d: SizedDevice): bigint => (d.type === 'BATTERY' ? units(d.attributes.battery_capacity_wh) : 0n);

/** Thousandths of a currency unit in whole units, half up, held within what the API answers. */
function wholeUnits(thousandths: bigint): number {
  const whole = (thousandths + 500n) / 1000n;
  return whole < 0n ? 0 : whole > BigInt(EARNINGS_MAX) ? EARNINGS_MAX : Number(whole);
}

/** The program covers the zip code, a ZIP+4 by its first five digits (no zip code means no filter). */
export function coversZip(p: Pick<Program, 'zip_codes'>, zip: string | null | undefined): boolean {
  return zip === undefined || zip === null || p.zip_codes.includes(zipArea(zip));
}

export function acceptsDeviceType(p: Pick<Program, 'eligible_device_types'>, type: DeviceTypeType | undefined): boolean {
  return type === undefined || p.eligible_device_types.includes(type);
}

/**
 * Estimated earnings of a site in a program: the rates applied to the site's eligible devices,
 * rounded to whole currency units. A site without eligible devices earns nothing. Computed
 * exactly (in thousandths, as bigints) whatever the rates and attributes, and answered at most
 * EARNINGS_MAX, so no program or site can make the estimate overflow.
 */
export function estimateEarnings(p: Pick<Program, 'rates' | 'eligible_device_types'>, devices: readonly SizedDevice[]): { upfront: number; yearly: number } {
  let upfront = 0n;
  let yearly = 0n;
  for (const d of devices) {
    if (!p.eligible_device_types.includes(d.type)) continue;
    upfront += units(p.rates.upfront_per_device) * 1000n + deviceCapacityWh(d) * units(p.rates.upfront_per_kwh);
    yearly += units(p.rates.yearly_per_device) * 1000n + devicePowerW(d) * units(p.rates.yearly_per_kw);
  }
  return { upfront: wholeUnits(upfront), yearly: wholeUnits(yearly) };
}

/**
 * The wire form of a program's integrator fields, made once per program object: programs are
 * never changed in place (a change makes a new object), and the catalog's read model hands the
 * same objects to every request, so a GET converts nothing.
 */
const integratorViews = new WeakMap<Program, ReturnType<typeof toWire<typeof IntegratorProgramFields>>>();

/** The API view of a program (the specification's 15 fields) for a site's devices. */
export function toApiProgram(p: Program, devices: readonly SizedDevice[] = []): ProgramType {
  let view = integratorViews.get(p);
  if (!view) integratorViews.set(p, (view = toWire(IntegratorProgramFields, p)));
  const earnings = estimateEarnings(p, devices);
  return { ...view, earnings_for_site_upfront: earnings.upfront, earnings_for_site_yearly: earnings.yearly };
}

/** The distinct device types of a site's devices, in first-seen order. */
export function deviceTypesOf(devices: readonly { type: DeviceTypeType }[]): DeviceTypeType[] {
  return [...new Set(devices.map((d) => d.type))];
}

/**
 * Whether a program is available to a site: it covers the site's zip code (a site without one
 * has no programs yet) and accepts at least one of the given device types; with no device types
 * (a site's lookup before its devices exist) the zip code alone decides; earnings then count only
 * the devices the program accepts.
 */
export function isEligible(p: Pick<Program, 'zip_codes' | 'eligible_device_types'>, zip: string | null | undefined, deviceTypes: readonly DeviceTypeType[]): boolean {
  if (zip === undefined || zip === null || !coversZip(p, zip)) return false;
  return deviceTypes.length === 0 || deviceTypes.some((t) => p.eligible_device_types.includes(t));
}

/** Commissioning's programs: those its devices are eligible for, so with no device, none. */
export function isEligibleForDevices(p: Pick<Program, 'zip_codes' | 'eligible_device_types'>, zip: string | null | undefined, deviceTypes: readonly DeviceTypeType[]): boolean {
  return deviceTypes.length > 0 && isEligible(p, zip, deviceTypes);
}

/**
 * A commission's programs: of the programs covering the site's zip code (in catalog order), those
 * its devices are eligible for, each with the earnings estimated from those devices. No zip code,
 * no programs.
 */
export function eligibleProgramsFor(covering: readonly Program[], zip: string | null, devices: readonly SizedDevice[]): ProgramType[] {
  if (!zip) return [];
  const types = deviceTypesOf(devices);
  return covering.filter((p) => isEligibleForDevices(p, zip, types)).map((p) => toApiProgram(p, devices));
}
