import { ProgramListQuery } from '@efs/api';
import { operation } from '@efs/messaging';
import { toApiProgram } from '../domain/program.ts';
import type { ProgramStore } from '../store/programStore.ts';

/** `GET /v1/programs` (client token): the catalog, filtered by zip code and device type. */
export const listPrograms = (store: ProgramStore) =>
  operation({
    query: ProgramListQuery,
    async handle({ query }) {
      const programs = await store.list({ zipCode: query.zip_code, deviceType: query.device_type, skip: query.skip, limit: query.limit });
      return { body: programs.map((p) => toApiProgram(p)) };
    },
  });
