import { SANDBOX_UTILITY_ID } from '@efs/contracts';
import type { Program } from './program.ts';
import { changedAt } from './utilityProgram.ts';

export const SANDBOX_ZIP_CODES = ['88800', '88801', '88802'];

/** Fixed ids, so that integrators' test suites can name sandbox programs across deployments. */
export const SandboxProgramIds = {
  batteryAutoEnroll: '5a0d0b7e-0000-4000-8000-000000000001',
  batteryCapacity: '5a0d0b7e-0000-4000-8000-000000000002',
  evSmartCharging: '5a0d0b7e-0000-4000-8000-000000000003',
} as const;

const allMonths = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/** The sandbox catalog of decisions.md: three programs covering zip codes 88800–88802. */
export function sandboxPrograms(autoApproveAfterMs: number, now: Date): Program[] {
  const base = { utility_id: SANDBOX_UTILITY_ID, zip_codes: [...SANDBOX_ZIP_CODES], auto_approve_after_ms: autoApproveAfterMs, created_at: now, updated_at: now };
  return [
    {
      ...base,
      id: SandboxProgramIds.batteryAutoEnroll,
      name: 'Sandbox Battery Flex',
      description: 'Sandbox battery program that devices join automatically at commissioning when the homeowner agreed beforehand.',
      eligible_device_types: ['BATTERY'],
      can_auto_enroll: true,
      minimum_reserve_percentage: 10,
      minimum_commitment_months: null,
      participation_months: allMonths,
      rates: { upfront_per_kwh: 10, upfront_per_device: 0, yearly_per_kw: 20, yearly_per_device: 0 },
      enrollment_form: [],
      terms_and_conditions_version: null,
      terms_and_conditions_text: null,
    },
    {
      ...base,
      id: SandboxProgramIds.batteryCapacity,
      name: 'Sandbox Battery Capacity',
      description: 'Sandbox summer capacity program for home batteries, with a twelve-month commitment.',
      eligible_device_types: ['BATTERY'],
      can_auto_enroll: false,
      minimum_reserve_percentage: 20,
      minimum_commitment_months: 12,
      participation_months: [5, 6, 7, 8, 9, 10],
      rates: { upfront_per_kwh: 25, upfront_per_device: 50, yearly_per_kw: 40, yearly_per_device: 0 },
      enrollment_form: [
        { name: 'utility_account_number', label: 'Utility account number', type: 'string', hint: 'Printed at the top of your **utility bill**.' },
      ],
      terms_and_conditions_version: '2026-01-01',
      terms_and_conditions_text:
        '# Sandbox Battery Capacity: terms and conditions\n\n' +
        '1. You stay enrolled for at least **12 months**.\n' +
        '2. During events your battery may discharge down to a reserve of 20 %.\n' +
        '3. You may opt out of individual events.\n',
    },
    {
      ...base,
      id: SandboxProgramIds.evSmartCharging,
      name: 'Sandbox EV Smart Charging',
      description: 'Sandbox program that shifts EV charging out of peak hours.',
      eligible_device_types: ['EV_CHARGER'],
      can_auto_enroll: false,
      minimum_reserve_percentage: 0,
      minimum_commitment_months: null,
      participation_months: allMonths,
      rates: { upfront_per_kwh: 0, upfront_per_device: 50, yearly_per_kw: 5, yearly_per_device: 60 },
      enrollment_form: [],
      terms_and_conditions_version: null,
      terms_and_conditions_text: null,
    },
  ];
}

/**
 * A stored sandbox program with the settings of this start (SANDBOX_AUTO_APPROVE_DELAY_MS), or
 * undefined when it has them already. Only what the settings decide changes: what its utility
 * changed through the API stays.
 */
export function withSandboxSettings(p: Program, autoApproveAfterMs: number, now: Date): Program | undefined {
  if (p.auto_approve_after_ms === autoApproveAfterMs) return undefined;
  return { ...p, auto_approve_after_ms: autoApproveAfterMs, updated_at: changedAt(p.updated_at, now) };
}
