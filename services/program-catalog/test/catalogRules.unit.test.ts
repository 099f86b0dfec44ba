import { describe, expect, it } from 'vitest';
import { Program as ApiProgram, SiteProgramsQuery, UtilityProgramCreate } from '@efs/api';
import { AUTO_APPROVE_DELAY_MAX_MS, DEVICE_QUANTITY_MAX, EARNINGS_MAX, RATE_MAX } from '@efs/contracts';
import { parseCatalogConfig } from '../src/config.ts';
import { deviceTypesOf, estimateEarnings, isEligible, toApiProgram, type Program } from '../src/domain/program.ts';
import { sandboxPrograms } from '../src/domain/sandbox.ts';
import { applyProgramUpdate, newUtilityProgram, nextTermsVersion, toUtilityProgram } from '../src/domain/utilityProgram.ts';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-02-01T00:00:00.000Z');
const bat = (wh: number, w: number) => ({ type: 'BATTERY' as const, attributes: { battery_capacity_wh: wh, battery_power_input_w: w, battery_power_output_w: w } });
const ev = (w: number) => ({ type: 'EV_CHARGER' as const, attributes: { max_charge_power_w: w } });
const [flex, capacity, evProgram] = sandboxPrograms(1000, t0) as [Program, Program, Program];

describe('eligibility', () => {
  it('needs a covered zip code', () => {
    expect(isEligible(flex, null, ['BATTERY'])).toBe(false);
    expect(isEligible(flex, undefined, [])).toBe(false);
    expect(isEligible(flex, '88803', ['BATTERY'])).toBe(false);
    expect(isEligible(flex, '88800', ['BATTERY'])).toBe(true);
  });
  it('needs one accepted device type; no devices means any type', () => {
    expect(isEligible(flex, '88801', ['EV_CHARGER'])).toBe(false);
    expect(isEligible(flex, '88801', ['EV_CHARGER', 'BATTERY'])).toBe(true);
    expect(isEligible(evProgram, '88802', [])).toBe(true);
  });
  it('device types of a site, once each', () => {
    expect(deviceTypesOf([bat(1, 1), ev(1), bat(2, 2)])).toEqual(['BATTERY', 'EV_CHARGER']);
  });
});

describe('earnings', () => {
  it("count only the program's device types, rates per kWh, kW and device, rounded", () => {
    expect(estimateEarnings(flex, [bat(13_500, 5000)])).toEqual({ upfront: 135, yearly: 100 });
    expect(estimateEarnings(capacity, [bat(13_500, 5000)])).toEqual({ upfront: 388, yearly: 200 });
    expect(estimateEarnings(capacity, [bat(13_500, 5000), ev(11_000)])).toEqual({ upfront: 388, yearly: 200 });
    expect(estimateEarnings(evProgram, [ev(11_000), ev(7_400)])).toEqual({ upfront: 100, yearly: 212 });
    expect(estimateEarnings(evProgram, [bat(10_000, 5000)])).toEqual({ upfront: 0, yearly: 0 });
  });
  it('the API view has the 15 fields with the earnings of the given devices', () => {
    const p = toApiProgram(flex, [bat(10_000, 2_000)]);
    expect(Object.keys(p)).toHaveLength(15);
    expect(p).toMatchObject({ earnings_for_site_upfront: 100, earnings_for_site_yearly: 40 });
    expect(p).not.toHaveProperty('rates');
  });
});

describe('earnings at the bounds', () => {
  const rates = (r: number) => ({ upfront_per_kwh: r, upfront_per_device: r, yearly_per_kw: r, yearly_per_device: r });
  const biggest = bat(DEVICE_QUANTITY_MAX, DEVICE_QUANTITY_MAX);

  it('the largest rates and device quantities give exact earnings', () => {
    // 1,000,000 per device + 1,000,000 kWh (or kW) × 1,000,000 per kWh (or kW).
    expect(estimateEarnings({ ...flex, rates: rates(RATE_MAX) }, [biggest])).toEqual({ upfront: 1_000_001_000_000, yearly: 1_000_001_000_000 });
  });

  it('rates of 2^53 - 1 (a program stored before the bounds) saturate at EARNINGS_MAX, which the API answers', () => {
    const huge = { ...flex, rates: rates(Number.MAX_SAFE_INTEGER) };
    expect(estimateEarnings(huge, Array.from({ length: 100 }, () => biggest))).toEqual({ upfront: EARNINGS_MAX, yearly: EARNINGS_MAX });
    for (const devices of [[biggest], [bat(1, 1)], []]) {
      const answered = toApiProgram(huge, devices);
      expect(ApiProgram.safeParse(answered).success, JSON.stringify(answered)).toBe(true);
      expect(Number.isSafeInteger(answered.earnings_for_site_upfront) && Number.isSafeInteger(answered.earnings_for_site_yearly)).toBe(true);
    }
    expect(toApiProgram(huge, [bat(1, 1)])).toMatchObject({ earnings_for_site_upfront: EARNINGS_MAX, earnings_for_site_yearly: EARNINGS_MAX });
  });

  it('rounds half up, exactly; what is not a number counts as nothing', () => {
    const perKwh = { ...flex, rates: { ...rates(0), upfront_per_kwh: 1 } };
    expect(estimateEarnings(perKwh, [bat(499, 0)]).upfront).toBe(0);
    expect(estimateEarnings(perKwh, [bat(500, 0)]).upfront).toBe(1);
    expect(estimateEarnings(perKwh, [bat(1500, 0), bat(1000, 0)]).upfront).toBe(3);
    expect(estimateEarnings(perKwh, [{ type: 'BATTERY', attributes: { battery_capacity_wh: 'lots' } }]).upfront).toBe(0);
  });

  it('the sandbox approval delay is bounded like the field that announces it', () => {
    expect(parseCatalogConfig({ SANDBOX_AUTO_APPROVE_DELAY_MS: String(AUTO_APPROVE_DELAY_MAX_MS) }).SANDBOX_AUTO_APPROVE_DELAY_MS).toBe(AUTO_APPROVE_DELAY_MAX_MS);
    expect(() => parseCatalogConfig({ SANDBOX_AUTO_APPROVE_DELAY_MS: String(AUTO_APPROVE_DELAY_MAX_MS + 1) })).toThrow(/SANDBOX_AUTO_APPROVE_DELAY_MS/);
  });
});

describe('utility programs', () => {
  const created = newUtilityProgram('u1', 'p1', UtilityProgramCreate.parse({ name: 'P', eligible_device_types: ['BATTERY'], zip_codes: ['22222', '11111', '22222'], participation_months: [7, 6], terms_and_conditions_text: 'T' }), t0);

  it('a new program: zip codes once each and sorted, months sorted, first terms version, defaults', () => {
    expect(created).toMatchObject({ zip_codes: ['11111', '22222'], participation_months: [6, 7], terms_and_conditions_version: 'v1', can_auto_enroll: false, auto_approve_after_ms: null });
    expect(newUtilityProgram('u1', 'p2', UtilityProgramCreate.parse({ name: 'P', eligible_device_types: ['BATTERY'], zip_codes: ['11111'] }), t0).terms_and_conditions_version).toBeNull();
    expect(Object.keys(toUtilityProgram(created))).toHaveLength(15);
  });

  it('terms versions count up and skip taken values', () => {
    expect(nextTermsVersion([])).toBe('v1');
    expect(nextTermsVersion(['2026-01-01'])).toBe('v2');
    expect(nextTermsVersion(['v1', 'v3'])).toBe('v4');
  });

  it('an update: no-op patches change nothing; terms text changes issue versions; rates merge', () => {
    expect(applyProgramUpdate(created, { name: 'P', terms_and_conditions_text: 'T' }, t1, ['v1'])).toMatchObject({ changed: false, newTermsVersion: null, program: { updated_at: t0 } });
    const c = applyProgramUpdate(created, { terms_and_conditions_text: 'T2', rates: { yearly_per_kw: 5 } }, t1, ['v1']);
    expect(c).toMatchObject({ changed: true, zipCodesChanged: false, newTermsVersion: 'v2', program: { terms_and_conditions_version: 'v2', terms_and_conditions_text: 'T2', updated_at: t1 } });
    expect(c.program.rates).toEqual({ upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 5, yearly_per_device: 0 });
    const cleared = applyProgramUpdate(created, { terms_and_conditions_text: null }, t1, ['v1']);
    expect(cleared).toMatchObject({ changed: true, newTermsVersion: null, program: { terms_and_conditions_version: null, terms_and_conditions_text: null } });
    const moved = applyProgramUpdate(created, { zip_codes: ['33333'] }, t1, ['v1']);
    expect(moved).toMatchObject({ changed: true, zipCodesChanged: true, program: { zip_codes: ['33333'] } });
    expect(applyProgramUpdate(created, { zip_codes: ['22222', '11111'] }, t1, ['v1'])).toMatchObject({ changed: false, zipCodesChanged: false });
  });

  it("an update by a replica whose clock is behind the last writer's is still later than the state it replaces", () => {
    const behind = new Date(t0.getTime() - 2000);
    const c = applyProgramUpdate(created, { name: 'Renamed' }, behind, ['v1']);
    expect(c.program.updated_at.getTime()).toBe(t0.getTime() + 1);
    expect(applyProgramUpdate(created, { name: 'Renamed' }, t1, ['v1']).program.updated_at).toBe(t1);
  });
});

describe('query parsing', () => {
  it('device_type is one value or several, always a list', () => {
    expect(SiteProgramsQuery.parse({ device_type: 'BATTERY' }).device_type).toEqual(['BATTERY']);
    expect(SiteProgramsQuery.parse({ device_type: ['BATTERY', 'EV_CHARGER'] }).device_type).toEqual(['BATTERY', 'EV_CHARGER']);
    expect(SiteProgramsQuery.parse({}).device_type).toBeUndefined();
    expect(SiteProgramsQuery.safeParse({ device_type: 'SOLAR' }).success).toBe(false);
  });
});
