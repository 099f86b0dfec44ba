import { ProgramFields, toWire, type ProgramMessage } from '@efs/contracts';
import type { ProgramRecord } from '@efs/api';

// Eligibility and earnings are shared with commissioning (libs/api/src/programRules.ts).
export { acceptsDeviceType, coversZip, deviceTypesOf, estimateEarnings, isEligible, isEligibleForDevices, toApiProgram, type SizedDevice } from '@efs/api';

/** A program as the catalog keeps it. */
export type Program = ProgramRecord;

/** The program as announced on the programs state topic. */
export function toProgramMessage(p: Program): ProgramMessage {
  return toWire(ProgramFields, p);
}
