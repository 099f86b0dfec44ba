import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { OperationDef, Topic } from '@efs/contracts';
import { apiClient, type ApiClient } from '@efs/testing';
import { type TestSystem } from './harness/system.ts';

export { fullSite } from '@efs/testing';

/** A unique id per call, so tests of one file never collide. */
export const uid = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export const SANDBOX_ZIPS = ['88800', '88801', '88802'] as const;
export const NO_PROGRAM_ZIP = '88803';
export const SandboxProgramIds = {
  batteryAutoEnroll: '5a0d0b7e-0000-4000-8000-000000000001',
  batteryCapacity: '5a0d0b7e-0000-4000-8000-000000000002',
  evSmartCharging: '5a0d0b7e-0000-4000-8000-000000000003',
} as const;

export function battery(siteId: string, id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    site_id: siteId,
    manufacturer_name: 'Acme',
    product_name: 'PowerWall 9000',
    serial_number: `SN-${id}`,
    type: 'BATTERY',
    attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
    install_date: '2024-05-01T10:00:00.000Z',
    ...overrides,
  };
}

export function evCharger(siteId: string, id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    site_id: siteId,
    manufacturer_name: 'Volt',
    product_name: 'Wallbox 11',
    serial_number: `SN-${id}`,
    type: 'EV_CHARGER',
    attributes: { max_charge_power_w: 11000 },
    install_date: '2024-06-01T08:30:00.000Z',
    ...overrides,
  };
}

/** A site token from `POST /v1/auth/site/{siteId}` (client token), as a mobile app gets one. */
export async function siteToken(t: TestSystem, siteId: string, client: ApiClient = t.api): Promise<string> {
  const r = await client.post(`/v1/auth/site/${encodeURIComponent(siteId)}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(typeof r.body.site_access_token).toBe('string');
  return r.body.site_access_token as string;
}

/** The public API as the end user of one site (site token). */
export async function asSite(t: TestSystem, siteId: string, client: ApiClient = t.api): Promise<ApiClient> {
  return apiClient(t.urls.public, await siteToken(t, siteId, client));
}

/** Asserts the specification's error body with the given status and code. */
export function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, status_code: status });
  expect(typeof r.body.message).toBe('string');
  expect(Array.isArray(r.body.detail)).toBe(true);
  expect(Array.isArray(r.body.errors)).toBe(true);
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const PROGRAM_KEYS = [
  'id', 'name', 'description', 'eligible_device_types', 'can_auto_enroll', 'minimum_reserve_percentage', 'minimum_commitment_months',
  'participation_months', 'earnings_for_site_upfront', 'earnings_for_site_yearly', 'created_at', 'updated_at', 'enrollment_form',
  'terms_and_conditions_version', 'terms_and_conditions_text',
].sort();

/** Every one of the Program's 15 fields, with the specification's types. */
export function expectProgram(p: any): void {
  expect(Object.keys(p).sort()).toEqual(PROGRAM_KEYS);
  expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(typeof p.name).toBe('string');
  expect(typeof p.description).toBe('string');
  expect(p.eligible_device_types.length).toBeGreaterThan(0);
  for (const t of p.eligible_device_types) expect(['BATTERY', 'EV_CHARGER']).toContain(t);
  expect(typeof p.can_auto_enroll).toBe('boolean');
  expect(Number.isInteger(p.minimum_reserve_percentage)).toBe(true);
  expect(p.minimum_commitment_months === null || Number.isInteger(p.minimum_commitment_months)).toBe(true);
  for (const m of p.participation_months) expect(Number.isInteger(m) && m >= 1 && m <= 12).toBe(true);
  expect(Number.isInteger(p.earnings_for_site_upfront)).toBe(true);
  expect(Number.isInteger(p.earnings_for_site_yearly)).toBe(true);
  expect(p.created_at).toMatch(ISO);
  expect(p.updated_at).toMatch(ISO);
  for (const f of p.enrollment_form) {
    expect(Object.keys(f).sort()).toEqual(['hint', 'label', 'name', 'type']);
    for (const k of ['hint', 'label', 'name', 'type']) expect(typeof f[k]).toBe('string');
  }
  expect(p.terms_and_conditions_version === null || typeof p.terms_and_conditions_version === 'string').toBe(true);
  expect(p.terms_and_conditions_text === null || typeof p.terms_and_conditions_text === 'string').toBe(true);
}

export const SITE_RECORD_KEYS = [
  'id', 'first_name', 'last_name', 'company_name', 'email', 'state_code', 'city', 'zip_code', 'street_address', 'street_address2',
  'service_account_id', 'created_at', 'updated_at',
].sort();

/** The site as read: every commissioning field (null when not given) plus timestamps. */
export function expectSiteRecord(s: any, input: Record<string, unknown>): void {
  expect(Object.keys(s).sort()).toEqual(SITE_RECORD_KEYS);
  for (const k of SITE_RECORD_KEYS) {
    if (k === 'created_at' || k === 'updated_at') expect(s[k]).toMatch(ISO);
    else expect(s[k], k).toEqual(input[k] ?? null);
  }
}

export const DEVICE_KEYS = ['id', 'site_id', 'manufacturer_name', 'product_name', 'serial_number', 'type', 'attributes', 'configuration', 'install_date', 'created_at', 'updated_at'].sort();

/** A device as answered: the input's fields (configuration always present, an integer reserve) and timestamps. */
export function expectDevice(d: any, input: Record<string, any>): void {
  expect(Object.keys(d).sort()).toEqual(DEVICE_KEYS);
  if (input.id !== undefined) expect(d.id).toBe(input.id);
  else expect(typeof d.id).toBe('string');
  expect(d.site_id).toBe(input.site_id);
  for (const k of ['manufacturer_name', 'product_name', 'serial_number']) expect(d[k], k).toBe(input[k] ?? null);
  expect(d.type).toBe(input.type);
  expect(d.attributes).toEqual(input.attributes);
  expect(Object.keys(d.configuration)).toEqual(['reserve_percentage']);
  expect(Number.isInteger(d.configuration.reserve_percentage)).toBe(true);
  expect(new Date(d.install_date).getTime()).toBe(new Date(input.install_date).getTime());
  expect(d.install_date).toMatch(ISO);
  expect(d.created_at).toMatch(ISO);
  expect(d.updated_at).toMatch(ISO);
}

/** Asks a service directly, as the gateway would for the given principal (another integrator or utility, internal ops); the request is sent as given, valid or not. */
export async function ask(
  t: TestSystem,
  op: OperationDef,
  principal: Partial<{ kind: 'CLIENT' | 'SITE' | 'PORTAL_SESSION' | 'UTILITY' | 'SYSTEM'; integrator_id: string | null; utility_id: string | null; site_id: string | null }>,
  req: { params?: Record<string, string>; query?: Record<string, string[]>; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const reply = await t.system.transport.request(
    op.target,
    {
      op: op.name,
      principal: { kind: 'CLIENT', integrator_id: null, utility_id: null, site_id: null, token_id: null, ...principal },
      params: req.params ?? {},
      query: req.query ?? {},
      body: req.body === undefined ? null : JSON.stringify(req.body),
    },
    { timeoutMs: 5000 },
  );
  return { status: reply.status, body: reply.body ? JSON.parse(reply.body) : undefined };
}

/** Collects every message of a topic (from its beginning) under a fresh consumer group. */
export async function captureTopic<T>(t: TestSystem, topic: Topic): Promise<{ key: string | null; value: T }[]> {
  const seen: { key: string | null; value: T }[] = [];
  await t.system.transport.subscribe(topic, uid('efs-test-capture'), async ({ value, meta }) => void seen.push({ key: meta.key, value: value as T }), { fromBeginning: true });
  return seen;
}
