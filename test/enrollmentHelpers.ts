import { expect } from 'vitest';
import type { TestSystem } from './harness/system.ts';
import { ENROLLMENT_FIELDS } from '../services/enrollment/test/fixtures.ts';
import { SandboxProgramIds } from './commissioningHelpers.ts';

// One copy of the helpers both suites need: ids, devices, site tokens and the error-body check.
export { asSite, battery, evCharger, expectError, uid } from './commissioningHelpers.ts';
/** The sandbox catalog's fixed ids (decisions.md, Programs). */
export const Sandbox = SandboxProgramIds;

export const CAPACITY_TERMS = '2026-01-01';

/** The specification's Enrollment fields: every one in every response, nothing else. */
export { ENROLLMENT_FIELDS } from '../services/enrollment/test/fixtures.ts';


export function expectEnrollment(e: any, expected: Record<string, unknown>): void {
  expect(Object.keys(e).sort()).toEqual(ENROLLMENT_FIELDS);
  expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(e).toMatchObject(expected);
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

/** Commissions a site with its devices (client token) and answers the response body. */
export async function commission(t: TestSystem, site: Record<string, unknown> & { id: string }, devices: unknown[], canAutoEnroll = false): Promise<any> {
  const r = await t.api.post('/v1/commission', { site, devices, can_auto_enroll: canAutoEnroll });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Body of an enrollment in the sandbox capacity program (terms and its form answered). */
export const capacityEnrollment = (deviceIds: string[]) => ({
  program_id: Sandbox.batteryCapacity,
  device_ids: deviceIds,
  has_agreed_to_terms_and_conditions: true,
  terms_and_conditions_version: CAPACITY_TERMS,
  program_specific_attributes: [{ name: 'utility_account_number', value: 'UA-123' }],
});
