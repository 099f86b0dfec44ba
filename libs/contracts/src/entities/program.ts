import { array, boolean, enumOf, enumType, int, long, omit, record, recordType, text, timestamp, visibleFields } from '../fields.ts';
import { DeviceTypes } from './device.ts';
import { zipCode } from './site.ts';

/**
 * Largest rate a utility may set, in whole currency units (per kWh, kW or device): far above any
 * real program, and small enough that a site's earnings stay exact (see `EARNINGS_MAX`).
 */
export const RATE_MAX = 1_000_000;

/**
 * Largest earnings the API answers; an estimate above it (thousands of devices at the largest
 * rates and quantities) is answered as this value rather than overflowing.
 */
export const EARNINGS_MAX = 1_000_000_000_000_000;

/** Longest delay after which a sandbox program approves an enrollment on its own: 30 days. */
export const AUTO_APPROVE_DELAY_MAX_MS = 30 * 24 * 3600 * 1000;

const FormItemTypes = enumType('FormItemType', 'efs.catalog', ['string', 'number', 'boolean']);

/** One question of a program's enrollment form; `program_specific_attributes` answer them. */
export const EnrollmentFormItemType = recordType('EnrollmentFormItem', 'efs.catalog', {
  name: text({ max: 200 }),
  label: text({ max: 255 }),
  type: enumOf(FormItemTypes),
  hint: text({ max: 2000 }),
});

const rate = <const D extends string>(doc: D) => int({ min: 0, max: RATE_MAX, doc });

/** Rates, in whole currency units, from which a site's earnings are estimated. */
export const RatesType = recordType('Rates', 'efs.catalog', {
  upfront_per_kwh: rate('one-time, per kWh of battery capacity'),
  upfront_per_device: rate('one-time, per eligible device'),
  yearly_per_kw: rate('per year, per kW of battery discharge or EV charging power'),
  yearly_per_device: rate('per year, per eligible device'),
});


/** A term the utility sets: required or defaulted when the program is created, changeable later. */
const term = { update: true, create: 'optional' } as const;

/**
 * A Program: the terms its utility sets, the terms version the service issues, its owner and the
 * sandbox setting (never shown), and timestamps. The integrator's view adds the site's earnings.
 */
export const ProgramFields = {
  id: text({ format: 'uuid' }),
  utility_id: text({ hidden: true }),
  name: text({ min: 1, max: 255, update: true, create: 'required' }),
  description: text({ max: 10_000, ...term, inputDefault: '' }),
  eligible_device_types: array(enumOf(DeviceTypes), { min: 1, unique: 'device types must not repeat', update: true, create: 'required' }),
  zip_codes: array(zipCode, { min: 1, max: 10_000, update: true, create: 'required', doc: 'Zip codes the program covers.' }),
  can_auto_enroll: boolean({ ...term, inputDefault: false }),
  minimum_reserve_percentage: int({ min: 0, max: 100, ...term, inputDefault: 0 }),
  minimum_commitment_months: int({ min: 0, max: 120, nullable: true, ...term, inputDefault: null }),
  participation_months: array(int({ min: 1, max: 12 }), { min: 1, unique: 'months must not repeat', ...term, inputDefault: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }),
  rates: record(RatesType, { ...term, inputDefault: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 } }),
  enrollment_form: array(record(EnrollmentFormItemType), { max: 50, ...term, inputDefault: [] }),
  terms_and_conditions_version: text({ nullable: true }),
  terms_and_conditions_text: text({ min: 1, max: 200_000, nullable: true, ...term, inputDefault: null, doc: 'Markdown; a change issues a new terms_and_conditions_version.' }),
  auto_approve_after_ms: long({ min: 0, max: AUTO_APPROVE_DELAY_MAX_MS, nullable: true, hidden: true, doc: 'sandbox programs approve PENDING enrollments after this delay' }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

/** What integrators see of a program (to which the API adds the site's earnings): not its coverage or rates. */
export const IntegratorProgramFields = omit(visibleFields(ProgramFields), ['zip_codes', 'rates']);
