import { assertInternal } from '@efs/access';
import { CatalogOperations, eligibleProgramsFor } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement } from '@efs/messaging';
import type { CatalogContext } from '../context.ts';

/**
 * Internal operation (commissioning, when its read model of the programs topic cannot tell that it
 * is up to date): programs for a zip code and devices, earnings from those devices.
 */
export const eligiblePrograms = ({ programs }: Pick<CatalogContext, 'programs'>) =>
  implement(CatalogOperations.eligiblePrograms, async ({ body, principal }) => {
    assertInternal(principal);
    if (!body.zip_code) return [];
    return eligibleProgramsFor(await programs.listByZip(zipArea(body.zip_code)), body.zip_code, body.devices);
  });
