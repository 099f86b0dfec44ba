import { deletedFlag, enumType, text, timestamp } from '../fields.ts';
import { STATE_CODES } from './stateCodes.ts';

export const StateCodes = enumType('StateCode', 'efs.commissioning', STATE_CODES);

/** The integrator's own identifier of a site or device (unique per integrator). */
export const externalId = text({ min: 1, max: 255 });

/** A US ZIP code: five digits, or ZIP+4 (`88801-1234`); anything else is refused. */
export const zipCode = text({ max: 10, pattern: { regex: /^\d{5}(-\d{4})?$/, message: 'a US ZIP code: five digits or ZIP+4 (88801-1234)' } });

/** What programs are matched by: a ZIP+4 matches as its first five digits. */
export const zipArea = (zip: string): string => zip.slice(0, 5);

/** A field the end user may fill in later: optional at commissioning, changeable, null while unknown. */
const info = { nullable: true, create: 'optional', update: true } as const;

/**
 * A Site: the specification's 11 fields (only `id` required at commissioning, the rest filled in
 * later by the end user), its timestamps, and the integrator it belongs to (never shown).
 */
export const SiteFields = {
  integrator_id: text({ hidden: true }),
  id: { ...externalId, create: 'required', doc: "The site's identifier in the caller's own system." },
  first_name: text({ max: 255, ...info }),
  last_name: text({ max: 255, ...info }),
  company_name: text({ max: 255, ...info, doc: 'Only when the customer is a company.' }),
  email: text({ max: 320, format: 'email', ...info }),
  state_code: text({ oneOf: StateCodes, ...info }),
  city: text({ max: 255, ...info }),
  zip_code: { ...zipCode, ...info },
  street_address: text({ max: 255, ...info }),
  street_address2: text({ max: 255, ...info }),
  service_account_id: text({ max: 255, ...info, deprecated: true, doc: "Deprecated. The customer's utility account ID." }),
  created_at: timestamp(),
  updated_at: timestamp(),
} as const;

/** The site as announced on its state topic: every field, and `deleted` for a removal. */
export const SiteMessageFields = { ...SiteFields, deleted: deletedFlag } as const;
