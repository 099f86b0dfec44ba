import { toProgramMessage } from '../programMessage.ts';
import type { UtilityProgramCreateType, UtilityProgramType, UtilityProgramUpdateType } from '@efs/api';
import type { Program } from './program.ts';

/**
 * The next terms version of a program: `v<n>` with n one more than the versions it had so far,
 * skipping any taken value. Versions are opaque to users; an enrollment records the one agreed to.
 */
export function nextTermsVersion(existing: readonly string[]): string {
  let n = existing.length + 1;
  while (existing.includes(`v${n}`)) n++;
  return `v${n}`;
}

/** A utility's new program; terms text, when given, gets its first version. */
export function newUtilityProgram(utilityId: string, id: string, input: UtilityProgramCreateType, now: Date): Program {
  return {
    id,
    utility_id: utilityId,
    name: input.name,
    description: input.description,
    eligible_device_types: [...input.eligible_device_types],
    zip_codes: [...new Set(input.zip_codes)].sort(),
    can_auto_enroll: input.can_auto_enroll,
    minimum_reserve_percentage: input.minimum_reserve_percentage,
    minimum_commitment_months: input.minimum_commitment_months,
    participation_months: [...input.participation_months].sort((a, b) => a - b),
    rates: { ...input.rates },
    enrollment_form: input.enrollment_form.map((f) => ({ ...f })),
    terms_and_conditions_version: input.terms_and_conditions_text === null ? null : nextTermsVersion([]),
    terms_and_conditions_text: input.terms_and_conditions_text,
    auto_approve_after_ms: null,
    created_at: now,
    updated_at: now,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export interface ProgramChange {
  program: Program;
  changed: boolean;
  zipCodesChanged: boolean;
  /** Set when the terms text changed to a new, non-null text: that text's new version. */
  newTermsVersion: string | null;
}

/**
 * Applies a utility's partial update. A change of the terms text issues a new version (null text
 * means the program no longer asks for terms); a patch that changes nothing changes nothing.
 */
export function applyProgramUpdate(p: Program, patch: UtilityProgramUpdateType, now: Date, termsVersions: readonly string[]): ProgramChange {
  const next: Program = { ...p, rates: { ...p.rates, ...(patch.rates ?? {}) } };
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.eligible_device_types !== undefined) next.eligible_device_types = [...patch.eligible_device_types];
  if (patch.zip_codes !== undefined) next.zip_codes = [...new Set(patch.zip_codes)].sort();
  if (patch.can_auto_enroll !== undefined) next.can_auto_enroll = patch.can_auto_enroll;
  if (patch.minimum_reserve_percentage !== undefined) next.minimum_reserve_percentage = patch.minimum_reserve_percentage;
  if (patch.minimum_commitment_months !== undefined) next.minimum_commitment_months = patch.minimum_commitment_months;
  if (patch.participation_months !== undefined) next.participation_months = [...patch.participation_months].sort((a, b) => a - b);
  if (patch.enrollment_form !== undefined) next.enrollment_form = patch.enrollment_form.map((f) => ({ ...f }));
  let newTermsVersion: string | null = null;
  if (patch.terms_and_conditions_text !== undefined && patch.terms_and_conditions_text !== p.terms_and_conditions_text) {
    next.terms_and_conditions_text = patch.terms_and_conditions_text;
    newTermsVersion = patch.terms_and_conditions_text === null ? null : nextTermsVersion(termsVersions);
    next.terms_and_conditions_version = newTermsVersion;
  }
  const { updated_at: _a, created_at: _b, ...before } = p;
  const { updated_at: _c, created_at: _d, ...after } = next;
  const changed = !same(before, after);
  if (changed) next.updated_at = now;
  return { program: next, changed, zipCodesChanged: !same(p.zip_codes, next.zip_codes), newTermsVersion };
}

/** A program as its utility sees it: the announced program without the owner and the sandbox setting. */
export function toUtilityProgram(p: Program): UtilityProgramType {
  const { utility_id: _owner, auto_approve_after_ms: _sandbox, ...view } = toProgramMessage(p);
  return view;
}
