import type { ProgramType, UtilityProgramType } from '@efs/api';

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
