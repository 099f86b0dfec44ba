import { assertInternal } from '@efs/access';
import { CatalogOperations, eligibleProgramsFor } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement } from '@efs/messaging';
import type { ProgramReads } from '../store/programReadModel.ts';

/**
 * Internal operation (commissioning, when its read model of the programs topic cannot tell that it
 * is up to date): programs for a zip code and devices, earnings from those devices.
 */
export const eligiblePrograms = (store: ProgramReads) =>
  implement(CatalogOperations.eligiblePrograms, async ({ body, principal }) => {
    assertInternal(principal);
    if (!body.zip_code) return [];
    return eligibleProgramsFor(await store.listByZip(zipArea(body.zip_code)), body.zip_code, body.devices);
  });
