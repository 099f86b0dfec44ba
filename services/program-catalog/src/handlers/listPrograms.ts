import { CatalogOperations } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement } from '@efs/messaging';
import { toApiProgram } from '../domain/program.ts';
import type { ProgramReads } from '../store/programReadModel.ts';

/** `GET /v1/programs` (client token): the catalog, filtered by zip code and device type. */
export const listPrograms = (store: ProgramReads) =>
  implement(CatalogOperations.listPrograms, async ({ query }) => {
    const programs = await store.list({ zipCode: query.zip_code === undefined ? undefined : zipArea(query.zip_code), deviceType: query.device_type, skip: query.skip, limit: query.limit });
    return programs.map((p) => toApiProgram(p));
  });
