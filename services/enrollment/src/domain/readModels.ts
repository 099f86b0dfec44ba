import type { DeviceTypeType } from '@efs/api';

/** What enrollment knows of a site (read model of the commissioning sites topic). */
export interface SiteView {
  integrator_id: string;
  id: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  email: string | null;
  state_code: string | null;
  city: string | null;
  zip_code: string | null;
  street_address: string | null;
  street_address2: string | null;
  service_account_id: string | null;
  created_at: Date;
  updated_at: Date;
  deleted: boolean;
}

/** What enrollment knows of a device (read model of the commissioning devices topic). */
export interface DeviceView {
  integrator_id: string;
  site_id: string;
  id: string;
  type: DeviceTypeType;
  updated_at: Date;
  deleted: boolean;
}

export interface FormItem {
  name: string;
  label: string;
  type: 'string' | 'number' | 'boolean';
  hint: string;
}

/** What enrollment knows of a program (read model of the catalog's programs topic). */
export interface ProgramView {
  id: string;
  utility_id: string;
  name: string;
  eligible_device_types: DeviceTypeType[];
  zip_codes: string[];
  can_auto_enroll: boolean;
  minimum_commitment_months: number | null;
  enrollment_form: FormItem[];
  terms_and_conditions_version: string | null;
  /** Sandbox programs approve a PENDING enrollment after this delay; null means a utility decides. */
  auto_approve_after_ms: number | null;
  created_at: Date;
  updated_at: Date;
}
