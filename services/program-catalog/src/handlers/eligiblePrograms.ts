import { EligibleProgramsRequest } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { deviceTypesOf, isEligible, toApiProgram } from '../domain/program.ts';
import type { ProgramStore } from '../store/programStore.ts';

/** Internal op `programs.eligible` (commissioning): programs for a zip code and devices, earnings from those devices. */
export const eligiblePrograms = (store: ProgramStore) =>
  operation({
    body: EligibleProgramsRequest,
    async handle({ body, principal }) {
      if (principal.kind !== 'SYSTEM') throw new AppError('FORBIDDEN', 'Internal operation');
      if (!body.zip_code) return { body: [] };
      const types = deviceTypesOf(body.devices);
      const programs = (await store.listByZip(body.zip_code)).filter((p) => isEligible(p, body.zip_code, types));
      return { body: programs.map((p) => toApiProgram(p, body.devices)) };
    },
  });
