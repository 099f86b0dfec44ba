import { z } from 'zod';
import { DateTime, DeviceType, Pagination } from './common.ts';

export const EnrollmentFormItem = z
  .object({
    name: z.string(),
    label: z.string(),
    type: z.enum(['string', 'number', 'boolean']),
    hint: z.string(),
  })
  .meta({ id: 'EnrollmentFormItem' });

/** A program as every endpoint answers it: all 15 fields, always present. */
export const Program = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    eligible_device_types: z.array(DeviceType),
    can_auto_enroll: z.boolean(),
    minimum_reserve_percentage: z.number().int(),
    minimum_commitment_months: z.number().int().nullable(),
    participation_months: z.array(z.number().int().min(1).max(12)),
    earnings_for_site_upfront: z.number().int(),
    earnings_for_site_yearly: z.number().int(),
    created_at: DateTime,
    updated_at: DateTime,
    enrollment_form: z.array(EnrollmentFormItem),
    terms_and_conditions_version: z.string().nullable(),
    terms_and_conditions_text: z.string().nullable(),
  })
  .meta({ id: 'Program' });
export type ProgramType = z.infer<typeof Program>;

/** `GET /v1/programs` (client token): the catalog, optionally filtered. */
export const ProgramListQuery = Pagination.extend({
  device_type: DeviceType.optional(),
  zip_code: z.string().min(1).max(10).optional(),
});
export type ProgramListQueryType = z.infer<typeof ProgramListQuery>;
