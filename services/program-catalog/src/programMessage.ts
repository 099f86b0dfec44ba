import type { ProgramMessage } from '@efs/contracts';
import type { Program } from './domain/program.ts';

/** The program as announced on the programs state topic. */
export function toProgramMessage(p: Program): ProgramMessage {
  return {
    id: p.id,
    utility_id: p.utility_id,
    name: p.name,
    description: p.description,
    eligible_device_types: [...p.eligible_device_types],
    zip_codes: [...p.zip_codes],
    can_auto_enroll: p.can_auto_enroll,
    minimum_reserve_percentage: p.minimum_reserve_percentage,
    minimum_commitment_months: p.minimum_commitment_months,
    participation_months: [...p.participation_months],
    rates: { ...p.rates },
    enrollment_form: p.enrollment_form.map((f) => ({ ...f })),
    terms_and_conditions_version: p.terms_and_conditions_version,
    terms_and_conditions_text: p.terms_and_conditions_text,
    auto_approve_after_ms: p.auto_approve_after_ms,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}
