import { UtilityProgramCreate, type ProgramType, type UtilityProgramCreateType, type UtilityProgramType } from '@efs/api';
import { Errors } from '@efs/errors';

/** The OpenADR 3.1 `program` (objectMetadata + programRequest) as this VTN answers it. */
export interface OpenAdrProgram {
  id: string;
  createdDateTime: string;
  modificationDateTime: string;
  objectType: 'PROGRAM';
  programName: string;
  programDescriptions: null;
  payloadDescriptors: null;
  attributes: { type: string; values: (string | number | boolean)[] }[];
  targets: null;
}

/** programName is at most 128 characters in the yaml; a longer catalog name is cut there. */
export const PROGRAM_NAME_MAX = 128;

type Common = Pick<UtilityProgramType, 'id' | 'name' | 'description' | 'eligible_device_types' | 'can_auto_enroll' | 'minimum_reserve_percentage' | 'minimum_commitment_months' | 'participation_months' | 'terms_and_conditions_version' | 'created_at' | 'updated_at'>;

/**
 * A catalog program as an OpenADR program. The terms OpenADR has no field for travel as
 * `attributes` (valuesMaps with privately defined types, as the Definitions allow); the program
 * has no targets (our programs are reached by enrollment, not by target strings), no
 * intervalPeriod (participation is by calendar month) and no programDescriptions (ours is text,
 * theirs are URLs: it is the DESCRIPTION attribute). `postalCodes` are the utility's view only.
 */
function toOpenAdr(p: Common, postalCodes?: readonly string[]): OpenAdrProgram {
  const attributes: OpenAdrProgram['attributes'] = [];
  if (p.description) attributes.push({ type: 'DESCRIPTION', values: [p.description] });
  attributes.push({ type: 'ELIGIBLE_DEVICE_TYPES', values: [...p.eligible_device_types] });
  if (postalCodes) attributes.push({ type: 'POSTAL_CODES', values: [...postalCodes] });
  attributes.push({ type: 'PARTICIPATION_MONTHS', values: [...p.participation_months] });
  attributes.push({ type: 'MINIMUM_RESERVE_PERCENTAGE', values: [p.minimum_reserve_percentage] });
  if (p.minimum_commitment_months !== null) attributes.push({ type: 'MINIMUM_COMMITMENT_MONTHS', values: [p.minimum_commitment_months] });
  attributes.push({ type: 'CAN_AUTO_ENROLL', values: [p.can_auto_enroll] });
  if (p.terms_and_conditions_version !== null) attributes.push({ type: 'TERMS_AND_CONDITIONS_VERSION', values: [p.terms_and_conditions_version] });
  return {
    id: p.id,
    createdDateTime: p.created_at,
    modificationDateTime: p.updated_at,
    objectType: 'PROGRAM',
    programName: Array.from(p.name).slice(0, PROGRAM_NAME_MAX).join(''),
    programDescriptions: null,
    payloadDescriptors: null,
    attributes,
    targets: null,
  };
}

/** A utility's own program, as its BL client reads it (coverage included). */
export const utilityProgramToOpenAdr = (p: UtilityProgramType): OpenAdrProgram => toOpenAdr(p, p.zip_codes);

/** A catalog program as an integrator's VEN client reads it (the integrator view: no coverage or rates). */
export const catalogProgramToOpenAdr = (p: ProgramType): OpenAdrProgram => toOpenAdr(p);

/** The yaml's programRequest, as far as this VTN reads it. */
export interface OpenAdrProgramRequest {
  programName: string;
  intervalPeriod?: unknown;
  programDescriptions?: unknown[] | null;
  payloadDescriptors?: unknown[] | null;
  attributes?: { type: string; values: unknown[] }[] | null;
  targets?: string[] | null;
}

/** The attributes a new program's terms are read from: each the catalog field it sets, and whether it is a list. */
const WRITABLE_ATTRIBUTES = {
  DESCRIPTION: { field: 'description', list: false },
  ELIGIBLE_DEVICE_TYPES: { field: 'eligible_device_types', list: true },
  POSTAL_CODES: { field: 'zip_codes', list: true },
  PARTICIPATION_MONTHS: { field: 'participation_months', list: true },
  MINIMUM_RESERVE_PERCENTAGE: { field: 'minimum_reserve_percentage', list: false },
  MINIMUM_COMMITMENT_MONTHS: { field: 'minimum_commitment_months', list: false },
  CAN_AUTO_ENROLL: { field: 'can_auto_enroll', list: false },
} as const;

/**
 * An OpenADR programRequest as the body of the catalog's createUtilityProgram: `programName` is
 * the name and the attributes of utilityProgramToOpenAdr set the terms they show
 * (ELIGIBLE_DEVICE_TYPES and POSTAL_CODES are required, as the catalog requires them); the catalog
 * checks the values with its own rules. What a program here cannot hold is refused with 400
 * naming it: another attribute type, an attribute given twice, programDescriptions,
 * payloadDescriptors, targets and intervalPeriod. Rates, the enrollment form and the terms text
 * keep the catalog's defaults.
 */
export function programFromOpenAdr(r: OpenAdrProgramRequest): UtilityProgramCreateType {
  const refuse = (message: string) => Errors.VALIDATION_ERROR(message);
  if (r.intervalPeriod !== undefined && r.intervalPeriod !== null) throw refuse('intervalPeriod: programs here run by calendar month (the PARTICIPATION_MONTHS attribute), not over a period');
  if (r.programDescriptions && r.programDescriptions.length > 0) throw refuse('programDescriptions: not kept; give the text as the DESCRIPTION attribute');
  if (r.payloadDescriptors && r.payloadDescriptors.length > 0) throw refuse('payloadDescriptors: not kept on programs; each event describes its own payloads');
  if (r.targets && r.targets.length > 0) throw refuse('targets: programs here have no targets; they are reached by enrollment');
  const body: Record<string, unknown> = { name: r.programName };
  for (const a of r.attributes ?? []) {
    if (!Object.hasOwn(WRITABLE_ATTRIBUTES, a.type)) throw refuse(`attributes: the attribute type ${a.type} is not kept by this VTN (${Object.keys(WRITABLE_ATTRIBUTES).join(', ')} are)`);
    const { field, list } = WRITABLE_ATTRIBUTES[a.type as keyof typeof WRITABLE_ATTRIBUTES];
    if (field in body) throw refuse(`attributes: ${a.type} is given twice`);
    if (!list && a.values.length !== 1) throw refuse(`attributes: ${a.type} has one value`);
    body[field] = list ? a.values : a.values[0];
  }
  for (const required of ['ELIGIBLE_DEVICE_TYPES', 'POSTAL_CODES'] as const) if (!(WRITABLE_ATTRIBUTES[required].field in body)) throw refuse(`attributes: ${required} is required`);
  // The catalog's own rules, here so that a refusal names the attribute, not our field.
  const parsed = UtilityProgramCreate.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path[0];
  const where = field === 'name' ? 'programName' : `attributes: ${Object.entries(WRITABLE_ATTRIBUTES).find(([, w]) => w.field === field)?.[0] ?? String(field)}`;
  throw refuse(`${where}: ${issue.message}`);
}
