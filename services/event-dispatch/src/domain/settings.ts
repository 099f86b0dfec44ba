import type { SettingsRequestType, SettingsStatusType } from '@efs/api';
import type { SettingsRequestMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';

/** A settings request as the service keeps it. */
export interface SettingsRequest {
  id: string;
  integrator_id: string;
  site_id: string;
  device_id: string;
  backup_reserve_percentage: number;
  status: SettingsStatusType;
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Why an older PENDING request of the device ends when a newer one arrives. */
export const SUPERSEDED = 'Superseded by a newer settings request for the device';

/**
 * A level the end user sets for a device must not go below the minimum of a program the device
 * is ACTIVE in (`minimum` null: none), 400 naming the field.
 */
export function assertAllowedLevel(level: number, minimum: number | null): void {
  if (minimum !== null && level < minimum) {
    throw Errors.VALIDATION_ERROR.forField(`${level} is below ${minimum}%, the minimum reserve of a program the device is enrolled in`, ['settings', 'backup_reserve_percentage']);
  }
}

/**
 * The device cloud's outcome: a PENDING request becomes APPLIED or FAILED; the same outcome again
 * changes nothing; any other change of a settled request is 409 (a superseded one included).
 */
export function settle(r: SettingsRequest, status: 'APPLIED' | 'FAILED', reason: string | null, now: Date): { request: SettingsRequest; changed: boolean } {
  if (r.status === status && r.status_reason === reason) return { request: r, changed: false };
  if (r.status !== 'PENDING' && r.status !== status) throw Errors.CONFLICT(`Settings request ${r.id} is ${r.status} already${r.status_reason ? ` (${r.status_reason})` : ''}`);
  return { request: { ...r, status, status_reason: reason, updated_at: now }, changed: true };
}

export function toApiSettingsRequest(r: SettingsRequest): SettingsRequestType {
  return {
    id: r.id,
    device_id: r.device_id,
    site_id: r.site_id,
    settings: { backup_reserve_percentage: r.backup_reserve_percentage },
    status: r.status,
    status_reason: r.status_reason,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function toSettingsMessage(r: SettingsRequest, change: SettingsRequestMessage['change']): SettingsRequestMessage {
  return { change, ...toApiSettingsRequest(r), integrator_id: r.integrator_id };
}
