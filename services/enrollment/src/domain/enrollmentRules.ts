import { missingSiteFields, type ProgramSpecificAttributeType } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { Errors, type ErrorBody } from '@efs/errors';
import type { TermsAgreement } from './enrollment.ts';
import type { DeviceView, ProgramView, SiteView } from './readModels.ts';

/**
 * The checks of `POST /v1/site/{siteId}/enrollments`, in the order of decisions.md: site
 * information complete, program eligible, devices of the site, terms, enrollment form, no
 * duplicate. Each throws the AppError the API answers with.
 */

type Issue = ErrorBody['errors'][number];

export { missingSiteFields };

export function assertSiteComplete(site: SiteView): void {
  const missing = missingSiteFields(site);
  if (missing.length === 0) return;
  const message = (f: string) => (f === 'first_name' || f === 'last_name' ? `${f} is required (or company_name)` : `${f} is required`);
  throw Errors.SITE_INFO_INCOMPLETE(`Site information is incomplete; missing: ${missing.join(', ')}`, {
    errors: missing.map((f) => ({ message: message(f), path: f })),
    detail: missing.map((f) => ({ loc: ['site', f], msg: message(f), type: 'missing' })),
  });
}

/** The program covers the site's zip code (a ZIP+4 by its first five digits). */
export function coversSite(program: Pick<ProgramView, 'zip_codes'>, site: Pick<SiteView, 'zip_code'>): boolean {
  return site.zip_code !== null && program.zip_codes.includes(zipArea(site.zip_code));
}

/**
 * The program is available for the site's zip code and every known device's type. Devices not
 * found are left to the ownership check that follows.
 */
export function assertEligible(program: ProgramView, site: SiteView, devices: readonly DeviceView[]): void {
  const errors: Issue[] = [];
  if (!coversSite(program, site)) {
    errors.push({ message: `The program is not available for zip code ${site.zip_code ?? '(none)'}`, path: 'zip_code' });
  }
  for (const d of devices) {
    if (!program.eligible_device_types.includes(d.type)) errors.push({ message: `Device type ${d.type} is not eligible for the program`, path: `device_ids/${d.id}` });
  }
  if (errors.length > 0) throw Errors.NOT_ELIGIBLE(`Not eligible for program ${program.id}: ${errors.map((e) => e.message).join('; ')}`, { errors });
}

/** Every requested device exists at the site. */
export function assertDevicesOfSite(deviceIds: readonly string[], found: readonly DeviceView[], siteId: string): void {
  const known = new Set(found.map((d) => d.id));
  const missing = deviceIds.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw Errors.NOT_FOUND(`Device ${missing.join(', ')} not found at site ${siteId}`, { errors: missing.map((id) => ({ message: 'Device not found at this site', path: `device_ids/${id}` })) });
  }
}

/** What an enrollment records of the terms, given the program's current version. */
export function termsOf(program: ProgramView, agreed: boolean | null | undefined, version: string | null | undefined): TermsAgreement {
  const current = program.terms_and_conditions_version;
  if (current === null) return { has_agreed_to_terms_and_conditions: agreed ?? null, terms_and_conditions_version: null };
  if (agreed !== true) {
    throw Errors.TERMS_NOT_ACCEPTED(`The program requires agreeing to its terms and conditions (version ${current})`, {
      errors: [{ message: 'Must be true', path: 'has_agreed_to_terms_and_conditions' }],
    });
  }
  if (version !== current) {
    throw Errors.TERMS_NOT_ACCEPTED(`The terms and conditions agreed to (${version ?? 'no version'}) are not the current version ${current}`, {
      errors: [{ message: `Must be the current version ${current}`, path: 'terms_and_conditions_version' }],
    });
  }
  return { has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: current };
}

/** The terms of an auto-enrollment: the homeowner agreed beforehand (`can_auto_enroll`), which covers the current terms. */
export function termsAgreedBeforehand(program: ProgramView): TermsAgreement {
  const current = program.terms_and_conditions_version;
  return { has_agreed_to_terms_and_conditions: current === null ? null : true, terms_and_conditions_version: current };
}

/** 409: a device is in an open (PENDING, NEEDS_ACTION or ACTIVE) enrollment of the program already. */
export const duplicateEnrollment = (deviceIds: readonly string[], programId: string) =>
  Errors.CONFLICT(`Device ${deviceIds.join(', ')} is already enrolled (PENDING, NEEDS_ACTION or ACTIVE) in program ${programId}`, {
    errors: deviceIds.map((id) => ({ message: 'Already enrolled in this program', path: `device_ids/${id}` })),
  });

/** The program, if it is the utility's own; another utility's program is answered as unknown. */
export function ownProgram(program: ProgramView | undefined, utilityId: string, programId: string): ProgramView {
  if (!program || program.utility_id !== utilityId) throw Errors.NOT_FOUND(`Program ${programId} not found`);
  return program;
}

const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * The answers to the program's enrollment form: every item answered once, with a value of the
 * item's type (a number, `true`/`false`, or non-blank text), and nothing the form does not ask.
 * Returns them in the form's order.
 */
export function checkFormAnswers(program: ProgramView, answers: readonly ProgramSpecificAttributeType[]): ProgramSpecificAttributeType[] {
  const issues: { path: string; index: number | null; message: string; type: string }[] = [];
  const byName = new Map<string, ProgramSpecificAttributeType>();
  answers.forEach((a, i) => {
    const item = program.enrollment_form.find((f) => f.name === a.name);
    if (!item) issues.push({ path: a.name, index: i, message: `The program's form has no field ${a.name}`, type: 'unrecognized_keys' });
    else if (byName.has(a.name)) issues.push({ path: a.name, index: i, message: `${a.name} is answered more than once`, type: 'duplicate' });
    else byName.set(a.name, a);
  });
  for (const item of program.enrollment_form) {
    const a = byName.get(item.name);
    const index = a ? answers.indexOf(a) : null;
    if (!a) issues.push({ path: item.name, index: null, message: `${item.label} (${item.name}) is required`, type: 'missing' });
    else if (item.type === 'number' && !NUMBER.test(a.value.trim())) issues.push({ path: item.name, index, message: `${item.name} must be a number`, type: 'invalid_type' });
    else if (item.type === 'boolean' && a.value !== 'true' && a.value !== 'false') issues.push({ path: item.name, index, message: `${item.name} must be true or false`, type: 'invalid_type' });
    else if (item.type === 'string' && a.value.trim() === '') issues.push({ path: item.name, index, message: `${item.name} must not be blank`, type: 'too_small' });
  }
  if (issues.length > 0) {
    throw Errors.VALIDATION_ERROR(`Invalid body: program_specific_attributes: ${issues[0]!.message}`, {
      detail: issues.map((i) => ({ loc: ['body', 'program_specific_attributes', ...(i.index === null ? [] : [String(i.index)]), i.path], msg: i.message, type: i.type })),
      errors: issues.map((i) => ({ message: i.message, path: `program_specific_attributes/${i.path}` })),
    });
  }
  return program.enrollment_form.map((f) => ({ name: f.name, value: byName.get(f.name)!.value }));
}
