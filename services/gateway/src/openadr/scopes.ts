/** The scopes of the OpenADR 3.1 yaml (`components.securitySchemes.oAuth2ClientCredentials`, and `read_bl` its operations use). */
export const OPENADR_SCOPES = ['read_all', 'read_bl', 'read_targets', 'read_ven_objects', 'write_programs', 'write_events', 'write_reports', 'write_subscriptions', 'write_vens'] as const;
export type OpenAdrScope = (typeof OPENADR_SCOPES)[number];

/** A business-logic client (a utility) or a VEN client (an integrator's device cloud). */
export type OpenAdrRole = 'BL' | 'VEN';
export const OPENADR_ROLES: readonly OpenAdrRole[] = ['BL', 'VEN'];

/**
 * The scopes a role's tokens may carry, as the yaml's scope descriptions assign them: BL reads
 * everything and writes programs and events; a VEN reads what targets it and its own objects and
 * writes reports. Both write subscriptions, VENs and resources.
 */
export const ROLE_SCOPES: Readonly<Record<OpenAdrRole, readonly OpenAdrScope[]>> = {
  BL: ['read_all', 'read_bl', 'write_programs', 'write_events', 'write_subscriptions', 'write_vens'],
  VEN: ['read_targets', 'read_ven_objects', 'write_reports', 'write_subscriptions', 'write_vens'],
};

/**
 * Whether granted scopes satisfy an operation's: one of them held, or `read_all` for an operation
 * that reads ("BL can read all resources"), so a BL token reads what the yaml declares with
 * `read_targets`, `read_ven_objects` or `read_bl`.
 */
export function scopesAllow(granted: readonly string[], required: readonly OpenAdrScope[]): boolean {
  return required.some((s) => granted.includes(s) || (s.startsWith('read_') && granted.includes('read_all')));
}
