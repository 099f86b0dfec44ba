import { describe, expect, it } from 'vitest';
import { CommissionRequest, DeviceCreate, SiteUpdate, StateCode, SupplementCreate } from '@efs/api';
import { autoEnrollChoice } from '../src/domain/autoEnroll.ts';
import { DEFAULT_RESERVE_PERCENTAGE, applyDeviceUpdate, newDevice, toDeviceMessage, toDeviceRecord } from '../src/domain/device.ts';
import { applySiteUpdate, newSite, toSiteMessage, toSiteRecord } from '../src/domain/site.ts';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-02T00:00:00.000Z');
const batteryIn = {
  id: 'b1',
  site_id: 's1',
  manufacturer_name: 'Acme',
  product_name: 'P',
  serial_number: 'SN',
  type: 'BATTERY' as const,
  attributes: { battery_capacity_wh: 10000, battery_power_input_w: 5000, battery_power_output_w: 4000 },
  configuration: { reserve_percentage: 40 },
  install_date: '2024-01-01T12:00:00+01:00',
};

describe('site rules', () => {
  it('a new site keeps the given fields and leaves the rest null', () => {
    const s = newSite('i1', { id: 's1', first_name: 'Ada', email: null, state_code: 'CA' }, t0);
    expect(toSiteRecord(s)).toEqual({
      id: 's1', first_name: 'Ada', last_name: null, company_name: null, email: null, state_code: 'CA', city: null, zip_code: null,
      street_address: null, street_address2: null, service_account_id: null, created_at: t0.toISOString(), updated_at: t0.toISOString(),
    });
    expect(toSiteMessage(s)).toMatchObject({ integrator_id: 'i1', id: 's1', deleted: false, created_at: t0.toISOString() });
  });

  it('an update changes only given fields, null clears, and updated_at moves only on a real change', () => {
    const s = newSite('i1', { id: 's1', first_name: 'Ada', city: 'Oakland' }, t0);
    const same = applySiteUpdate(s, { first_name: 'Ada' }, t1);
    expect(same.changed).toBe(false);
    expect(same.site.updated_at).toBe(t0);
    const next = applySiteUpdate(s, { city: null, zip_code: '88801' }, t1);
    expect(next.changed).toBe(true);
    expect(next.site).toMatchObject({ first_name: 'Ada', city: null, zip_code: '88801', updated_at: t1, created_at: t0 });
    expect(s.city).toBe('Oakland');
  });
});

describe('device rules', () => {
  it('the deprecated configuration is ignored; the reserve answers its default until one is set', () => {
    const d = newDevice('i1', 'b1', batteryIn, t0);
    expect(d.reserve_percentage).toBeNull();
    const rec = toDeviceRecord(d);
    expect(rec.configuration).toEqual({ reserve_percentage: DEFAULT_RESERVE_PERCENTAGE });
    expect(rec.install_date).toBe('2024-01-01T11:00:00.000Z');
    expect(toDeviceRecord({ ...d, reserve_percentage: 25 }).configuration).toEqual({ reserve_percentage: 25 });
    expect(toDeviceMessage(d, true)).toMatchObject({ id: 'b1', site_id: 's1', integrator_id: 'i1', reserve_percentage: null, deleted: true, attributes: batteryIn.attributes });
  });

  it('optional descriptive fields of create-device become null', () => {
    const d = newDevice('i1', 'gen', { site_id: 's1', type: 'EV_CHARGER', attributes: { max_charge_power_w: 7000 }, install_date: '2024-01-01T00:00:00Z' }, t0);
    expect(d).toMatchObject({ id: 'gen', manufacturer_name: null, product_name: null, serial_number: null });
  });

  it('an update changes descriptive fields and the install date, never the configuration', () => {
    const d = newDevice('i1', 'b1', batteryIn, t0);
    expect(applyDeviceUpdate(d, { configuration: { reserve_percentage: 99 }, install_date: '2024-01-01T11:00:00Z' }, t1)).toMatchObject({ changed: false, device: { updated_at: t0 } });
    const u = applyDeviceUpdate(d, { serial_number: null, install_date: '2025-01-01T00:00:00Z' }, t1);
    expect(u.changed).toBe(true);
    expect(u.device).toMatchObject({ serial_number: null, manufacturer_name: 'Acme', updated_at: t1, reserve_percentage: null });
    expect(u.device.install_date.toISOString()).toBe('2025-01-01T00:00:00.000Z');
  });
});

describe('auto-enrollment choice', () => {
  const programs = [
    { id: 'ev-auto', can_auto_enroll: true, eligible_device_types: ['EV_CHARGER' as const] },
    { id: 'bat-manual', can_auto_enroll: false, eligible_device_types: ['BATTERY' as const] },
    { id: 'bat-auto', can_auto_enroll: true, eligible_device_types: ['BATTERY' as const] },
  ];
  const devices = [{ id: 'b', type: 'BATTERY' as const }, { id: 'e', type: 'EV_CHARGER' as const }, { id: 'b2', type: 'BATTERY' as const }];

  it('nothing without the homeowner agreement', () => {
    expect(autoEnrollChoice(false, programs, devices)).toBeUndefined();
  });
  it('the first program that permits it and accepts a device, with the devices it accepts', () => {
    expect(autoEnrollChoice(true, programs, devices)).toEqual({ programId: 'ev-auto', devices: [devices[1]] });
    expect(autoEnrollChoice(true, programs, [devices[0]!, devices[2]!])).toEqual({ programId: 'bat-auto', devices: [devices[0], devices[2]] });
  });
  it('nothing when no permitting program accepts a device', () => {
    expect(autoEnrollChoice(true, [programs[1]!], devices)).toBeUndefined();
    expect(autoEnrollChoice(true, programs, [])).toBeUndefined();
  });
});

describe('input validation', () => {
  const commission = (over: Record<string, unknown> = {}) => ({ site: { id: 's1' }, devices: [batteryIn], can_auto_enroll: true, ...over });
  const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) => (r.error?.issues ?? []).map((i) => i.path.join('/'));

  it('state codes are the specification\'s 51 (no DC)', () => {
    expect(StateCode.options).toHaveLength(51);
    expect(StateCode.safeParse('PR').success).toBe(true);
    expect(StateCode.safeParse('DC').success).toBe(false);
  });

  it('accepts a valid request and rejects each invalid field at its path', () => {
    expect(CommissionRequest.safeParse(commission()).success).toBe(true);
    expect(paths(CommissionRequest.safeParse(commission({ can_auto_enroll: undefined })))).toEqual(['can_auto_enroll']);
    expect(paths(CommissionRequest.safeParse(commission({ site: { id: 's1', email: 'x@' } })))).toEqual(['site/email']);
    expect(paths(CommissionRequest.safeParse(commission({ site: { id: 's1', state_code: 'DC' } })))).toEqual(['site/state_code']);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, site_id: 's2' }] })))).toEqual(['devices/0/site_id']);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [batteryIn, batteryIn] })))).toEqual(['devices/1/id']);
    // An EV charger's attributes are not shown by the specification: integers by any name pass, anything else does not.
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, type: 'EV_CHARGER' }] })))).toEqual([]);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, type: 'EV_CHARGER', attributes: { max_charge_power_w: 7.4 } }] })))).toEqual(['devices/0/attributes/max_charge_power_w']);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, type: 'EV_CHARGER', attributes: { connector: 'J1772' } }] })))).toEqual(['devices/0/attributes/connector']);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, attributes: { ...batteryIn.attributes, battery_power_output_w: 1.5 } }] })))).toEqual([
      'devices/0/attributes/battery_power_output_w',
    ]);
    expect(paths(CommissionRequest.safeParse(commission({ devices: [{ ...batteryIn, install_date: '2024-01-01' }] })))).toEqual(['devices/0/install_date']);
  });

  it('create-device requires only site_id, type, attributes and install_date', () => {
    expect(DeviceCreate.safeParse({ site_id: 's1', type: 'EV_CHARGER', attributes: { max_charge_power_w: 1 }, install_date: '2024-01-01T00:00:00Z' }).success).toBe(true);
    const r = DeviceCreate.safeParse({ site_id: 's1', type: 'BATTERY', attributes: batteryIn.attributes });
    expect(paths(r)).toEqual(['install_date']);
  });

  it('a site update refuses id and unknown fields', () => {
    expect(SiteUpdate.safeParse({ city: null, zip_code: '88801' }).success).toBe(true);
    expect(SiteUpdate.safeParse({ id: 'other' }).success).toBe(false);
    expect(SiteUpdate.safeParse({ zipcode: '1' }).success).toBe(false);
  });

  it('a supplement needs a site and a data object', () => {
    expect(SupplementCreate.safeParse({ site_id: 's1', data: { a: [1] } }).success).toBe(true);
    expect(paths(SupplementCreate.safeParse({ site_id: 's1', data: [1] }))).toEqual(['data']);
  });
});
