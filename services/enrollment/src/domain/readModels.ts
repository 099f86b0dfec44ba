import { DeviceMessageFields, ProgramFields, SiteMessageFields, pick, type DomainOf } from '@efs/contracts';

/** What enrollment keeps of a site: the read model of the commissioning sites topic, whole. */
export const SiteViewFields = SiteMessageFields;
export type SiteView = DomainOf<typeof SiteViewFields>;

/** What enrollment keeps of a device (read model of the commissioning devices topic). */
export const DeviceViewFields = pick(DeviceMessageFields, ['integrator_id', 'site_id', 'id', 'type', 'updated_at', 'deleted']);
export type DeviceView = DomainOf<typeof DeviceViewFields>;

/**
 * What enrollment knows of a program (read model of the catalog's programs topic).
 * `auto_approve_after_ms`: sandbox programs approve a PENDING enrollment after this delay; null means a utility decides.
 */
export const ProgramViewFields = pick(ProgramFields, [
  'id',
  'utility_id',
  'name',
  'eligible_device_types',
  'zip_codes',
  'can_auto_enroll',
  'minimum_commitment_months',
  'enrollment_form',
  'terms_and_conditions_version',
  'auto_approve_after_ms',
  'created_at',
  'updated_at',
]);
export type ProgramView = DomainOf<typeof ProgramViewFields>;
