import type { ReadingMessage } from '@efs/contracts';
import { meter } from '@efs/telemetry';

/** Why a reading was refused: its item failed validation, its device is not the integrator's, its time is out of range (before 2000 or the retention, or over a year ahead), or the readings topic did not take it in time (503). */
export type RejectReason = 'invalid' | 'unknown_device' | 'time_out_of_range' | 'unavailable';

const REASONS: readonly RejectReason[] = ['invalid', 'unknown_device', 'time_out_of_range', 'unavailable'];

/**
 * efs.telemetry.readings.accepted (by kind) and efs.telemetry.readings.rejected (by kind and
 * reason), counted where the gateway answers a telemetry request: a reading is accepted once the
 * broker has acknowledged it. The attribute objects are built once per kind and reason, so a
 * request of a thousand readings allocates none.
 */
export function readingCounters(kind: ReadingMessage['kind']) {
  const m = meter();
  const accepted = m.createCounter('efs.telemetry.readings.accepted', { description: 'Readings accepted by the gateway (acknowledged by the broker), by kind', unit: '{reading}' });
  const rejected = m.createCounter('efs.telemetry.readings.rejected', { description: 'Readings refused by the gateway, by kind and reason', unit: '{reading}' });
  const acceptedAttrs = { service: 'gateway', kind };
  const rejectedAttrs = Object.fromEntries(REASONS.map((reason) => [reason, { service: 'gateway', kind, reason }])) as Record<RejectReason, { service: string; kind: string; reason: RejectReason }>;
  return {
    accepted(n: number): void {
      if (n > 0) accepted.add(n, acceptedAttrs);
    },
    rejected(n: number, reason: RejectReason): void {
      if (n > 0) rejected.add(n, rejectedAttrs[reason]);
    },
  };
}
