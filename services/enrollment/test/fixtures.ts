import { randomUUID } from 'node:crypto';
import type { DeviceMessage, Principal, ProgramMessage, SiteMessage } from '@efs/contracts';
import { AppError } from '@efs/errors';
import { fullSite, thrownBy } from '@efs/testing';

/** Tenants, principals and messages the enrollment tests of every tier use; no infrastructure. */

export const INTEGRATOR = 'integrator-a';
export const UTILITY = 'utility-1';

export const sitePrincipal = (siteId: string, integratorId = INTEGRATOR): Principal => ({ kind: 'SITE', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: 't' });
export const utilityPrincipal = (utilityId = UTILITY): Principal => ({ kind: 'UTILITY', integrator_id: null, utility_id: utilityId, site_id: null, token_id: 'k' });
export const systemPrincipal = (integratorId = INTEGRATOR): Principal => ({ kind: 'SYSTEM', integrator_id: integratorId, utility_id: null, site_id: null, token_id: null });

export function siteMessage(id: string, over: Partial<SiteMessage> = {}): SiteMessage {
  const fields = fullSite(id, { city: 'Fresno', street_address: '1 Main St', street_address2: null, service_account_id: null }) as Omit<SiteMessage, 'integrator_id' | 'created_at' | 'updated_at' | 'deleted'>;
  return { ...fields, integrator_id: INTEGRATOR, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', deleted: false, ...over };
}

export function deviceMessage(siteId: string, id: string, over: Partial<DeviceMessage> = {}): DeviceMessage {
  return {
    integrator_id: INTEGRATOR,
    site_id: siteId,
    id,
    manufacturer_name: 'Acme',
    product_name: 'PowerBox',
    serial_number: `sn-${id}`,
    type: 'BATTERY',
    attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
    reserve_percentage: 20,
    install_date: '2025-12-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    deleted: false,
    ...over,
  };
}

export function programMessage(over: Partial<ProgramMessage> = {}): ProgramMessage {
  return {
    id: randomUUID(),
    utility_id: UTILITY,
    name: 'Capacity',
    description: 'A program',
    eligible_device_types: ['BATTERY'],
    zip_codes: ['88800', '88801'],
    can_auto_enroll: false,
    minimum_reserve_percentage: 20,
    minimum_commitment_months: null,
    participation_months: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    rates: { upfront_per_kwh: 1, upfront_per_device: 0, yearly_per_kw: 1, yearly_per_device: 0 },
    enrollment_form: [],
    terms_and_conditions_version: null,
    terms_and_conditions_text: null,
    auto_approve_after_ms: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

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
];

/** The AppError a call throws (fails the test when it throws nothing or something else). */
export const errorOf = (fn: () => unknown): AppError => thrownBy(fn, AppError);
