import type { UtilityProgramCreateType, UtilityProgramType, UtilityProgramUpdateType } from '@efs/api';
import { ProgramFields, applyPatch, createKeys, fromInput, omit, pick, toWire, updateKeys, visibleFields, zipArea } from '@efs/contracts';
import type { Program } from './program.ts';

/** What a utility sets when it creates a program, and what it may change (the terms text has its own rule). */
const ProgramInput = pick(ProgramFields, createKeys(ProgramFields));
const ProgramChanges = omit(pick(ProgramFields, updateKeys(ProgramFields)), ['terms_and_conditions_text']);

/**
 * Five-digit zip codes (a ZIP+4 covers its five-digit ZIP code) once each and sorted, months in
 * calendar order: two equal coverages compare equal.
 */
const canonical = (p: Program): Program => ({ ...p, zip_codes: [...new Set(p.zip_codes.map(zipArea))].sort(), participation_months: [...p.participation_months].sort((a, b) => a - b) });

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
  return canonical({
    ...fromInput(ProgramInput, input),
    id,
    utility_id: utilityId,
    terms_and_conditions_version: input.terms_and_conditions_text === null ? null : nextTermsVersion([]),
    auto_approve_after_ms: null,
    created_at: now,
    updated_at: now,
  });
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
  const { terms_and_conditions_text: _text, rates, ...terms } = patch;
  // A patch names only the rates it changes.
  const merged: Program['rates'] | undefined = rates === undefined ? undefined : { ...p.rates, ...rates };
  const next = canonical(applyPatch(ProgramChanges, p, { ...terms, rates: merged }).next);
  let newTermsVersion: string | null = null;
  if (patch.terms_and_conditions_text !== undefined && patch.terms_and_conditions_text !== p.terms_and_conditions_text) {
    next.terms_and_conditions_text = patch.terms_and_conditions_text;
    newTermsVersion = patch.terms_and_conditions_text === null ? null : nextTermsVersion(termsVersions);
    next.terms_and_conditions_version = newTermsVersion;
  }
  const { updated_at: _a, created_at: _b, ...before } = p;
  const { updated_at: _c, created_at: _d, ...after } = next;
  const changed = !same(before, after);
  if (changed) next.updated_at = changedAt(p.updated_at, now);
  return { program: next, changed, zipCodesChanged: !same(p.zip_codes, next.zip_codes), newTermsVersion };
}

/**
 * A changed program's `updated_at`: now, or a millisecond after the state it replaces when this
 * replica's clock is behind the one that wrote that state. Readers of the programs topic keep a
 * program's newest state by `updated_at` (a dead letter replayed late carries an older one), so
 * each change must be later than the one before it whatever the writers' clocks say.
 */
export function changedAt(previous: Date, now: Date): Date {
  return now.getTime() > previous.getTime() ? now : new Date(previous.getTime() + 1);
}

/** A program as its utility sees it: every field but the owner and the sandbox setting. */
export function toUtilityProgram(p: Program): UtilityProgramType {
  return toWire(visibleFields(ProgramFields), p);
}
