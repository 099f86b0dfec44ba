import { defineTopic } from './topic.ts';

export const DeviceTypeSchema = {
  type: 'enum',
  name: 'DeviceType',
  namespace: 'efs.common',
  symbols: ['BATTERY', 'EV_CHARGER'],
} as const;

const EnrollmentFormItem = {
  type: 'record',
  name: 'EnrollmentFormItem',
  namespace: 'efs.catalog',
  fields: [
    { name: 'name', type: 'string' },
    { name: 'label', type: 'string' },
    { name: 'type', type: { type: 'enum', name: 'FormItemType', namespace: 'efs.catalog', symbols: ['string', 'number', 'boolean'] } },
    { name: 'hint', type: 'string' },
  ],
} as const;

/** Rates from which a site's earnings are estimated (whole currency units). */
const Rates = {
  type: 'record',
  name: 'Rates',
  namespace: 'efs.catalog',
  fields: [
    { name: 'upfront_per_kwh', type: 'int', doc: 'one-time, per kWh of battery capacity' },
    { name: 'upfront_per_device', type: 'int', doc: 'one-time, per eligible device' },
    { name: 'yearly_per_kw', type: 'int', doc: 'per year, per kW of discharge or charging power' },
    { name: 'yearly_per_device', type: 'int', doc: 'per year, per eligible device' },
  ],
} as const;

/** The latest state of a program, keyed by program id on a compacted topic. */
export const ProgramSchema = {
  type: 'record',
  name: 'Program',
  namespace: 'efs.catalog',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'utility_id', type: 'string' },
    { name: 'name', type: 'string' },
    { name: 'description', type: 'string' },
    { name: 'eligible_device_types', type: { type: 'array', items: DeviceTypeSchema } },
    { name: 'zip_codes', type: { type: 'array', items: 'string' } },
    { name: 'can_auto_enroll', type: 'boolean' },
    { name: 'minimum_reserve_percentage', type: 'int' },
    { name: 'minimum_commitment_months', type: ['null', 'int'], default: null },
    { name: 'participation_months', type: { type: 'array', items: 'int' } },
    { name: 'rates', type: Rates },
    { name: 'enrollment_form', type: { type: 'array', items: EnrollmentFormItem } },
    { name: 'terms_and_conditions_version', type: ['null', 'string'], default: null },
    { name: 'terms_and_conditions_text', type: ['null', 'string'], default: null },
    { name: 'auto_approve_after_ms', type: ['null', 'long'], default: null, doc: 'sandbox programs approve PENDING enrollments after this delay' },
    { name: 'created_at', type: 'string' },
    { name: 'updated_at', type: 'string' },
  ],
} as const;

export const ProgramsTopic = defineTopic({
  name: 'efs.catalog.programs',
  kind: 'state',
  partitions: 3,
  compacted: true,
  schema: ProgramSchema,
});
