import { assertInternal } from '@efs/access';
import { CatalogOperations } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement } from '@efs/messaging';
import { deviceTypesOf, isEligibleForDevices, toApiProgram } from '../domain/program.ts';
import type { ProgramReads } from '../store/programReadModel.ts';

/** Internal operation (commissioning): programs for a zip code and devices, earnings from those devices. */
export const eligiblePrograms = (store: ProgramReads) =>
  implement(CatalogOperations.eligiblePrograms, async ({ body, principal }) => {
    assertInternal(principal);
    if (!body.zip_code) return [];
    const types = deviceTypesOf(body.devices);
    const programs = (await store.listByZip(zipArea(body.zip_code))).filter((p) => isEligibleForDevices(p, body.zip_code, types));
    return programs.map((p) => toApiProgram(p, body.devices));
  });
