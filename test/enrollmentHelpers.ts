import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { apiClient, type ApiClient, type TestSystem } from '@efs/testing';

export const uid = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** The sandbox catalog's fixed ids (decisions.md, Programs). */
export const Sandbox = {
  batteryAutoEnroll: '5a0d0b7e-0000-4000-8000-000000000001',
  batteryCapacity: '5a0d0b7e-0000-4000-8000-000000000002',
  evSmartCharging: '5a0d0b7e-0000-4000-8000-000000000003',
} as const;
export const CAPACITY_TERMS = '2026-01-01';

/** The specification's Enrollment fields: every one in every response, nothing else. */
export const ENROLLMENT_FIELDS = [
  'device_ids',
  'enroll_method',
  'enrolled_at',
  'has_agreed_to_terms_and_conditions',
  'id',
  'program_id',
  'program_specific_attributes',
  'site_id',
  'status',
  'status_reason',
  'terms_and_conditions_version',
  'unenrolled_at',
].sort();

export function expectEnrollment(e: any, expected: Record<string, unknown>): void {
  expect(Object.keys(e).sort()).toEqual(ENROLLMENT_FIELDS);
  expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(e).toMatchObject(expected);
}

export function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, status_code: status });
  expect(typeof r.body.message).toBe('string');
  expect(Array.isArray(r.body.detail)).toBe(true);
  expect(Array.isArray(r.body.errors)).toBe(true);
}

export const completeSite = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  state_code: 'CA',
  city: 'Oakland',
  street_address: '1 Battery Way',
  zip_code: '88801',
};

export function battery(siteId: string, id: string) {
  return {
    id,
    site_id: siteId,
    manufacturer_name: 'Acme',
    product_name: 'PowerWall 9000',
    serial_number: `SN-${id}`,
    type: 'BATTERY',
    attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
    install_date: '2024-05-01T10:00:00.000Z',
  };
}

export function evCharger(siteId: string, id: string) {
  return {
    id,
    site_id: siteId,
    manufacturer_name: 'Volt',
    product_name: 'Wallbox 11',
    serial_number: `SN-${id}`,
    type: 'EV_CHARGER',
    attributes: { max_charge_power_w: 11000 },
    install_date: '2024-06-01T08:30:00.000Z',
  };
}

/** Commissions a site with its devices (client token) and answers the response body. */
export async function commission(t: TestSystem, site: Record<string, unknown> & { id: string }, devices: unknown[], canAutoEnroll = false): Promise<any> {
  const r = await t.api.post('/v1/commission', { site, devices, can_auto_enroll: canAutoEnroll });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** The public API as the end user of one site, with a site token from `POST /v1/auth/site/{siteId}`. */
export async function asSite(t: TestSystem, siteId: string): Promise<ApiClient> {
  const r = await t.api.post(`/v1/auth/site/${encodeURIComponent(siteId)}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return apiClient(t.urls.public, r.body.site_access_token as string);
}

/** Body of an enrollment in the sandbox capacity program (terms and its form answered). */
export const capacityEnrollment = (deviceIds: string[]) => ({
  program_id: Sandbox.batteryCapacity,
  device_ids: deviceIds,
  has_agreed_to_terms_and_conditions: true,
  terms_and_conditions_version: CAPACITY_TERMS,
  program_specific_attributes: [{ name: 'utility_account_number', value: 'UA-123' }],
});
