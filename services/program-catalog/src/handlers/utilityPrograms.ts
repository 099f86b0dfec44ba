import { randomUUID } from 'node:crypto';
import { UtilityProgramCreate, UtilityProgramListQuery, UtilityProgramParams, UtilityProgramUpdate } from '@efs/api';
import { ProgramsTopic } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import { applyProgramUpdate, newUtilityProgram, toUtilityProgram } from '../domain/utilityProgram.ts';
import { toProgramMessage } from '../programMessage.ts';
import type { ProgramStore } from '../store/programStore.ts';
import { utilityOf } from './access.ts';

const notFound = (id: string) => new AppError('NOT_FOUND', `Program ${id} not found`);

/** `GET {utility_base_url}/v1/programs`: the utility's own programs. */
export const utilityListPrograms = (store: ProgramStore) =>
  operation({
    query: UtilityProgramListQuery,
    async handle({ query, principal }) {
      const programs = await store.list({ utilityId: utilityOf(principal), skip: query.skip, limit: query.limit });
      return { body: programs.map(toUtilityProgram) };
    },
  });

/** `GET {utility_base_url}/v1/programs/{id}`: another utility's program is 404. */
export const utilityGetProgram = (store: ProgramStore) =>
  operation({
    params: UtilityProgramParams,
    async handle({ params, principal }) {
      const program = await store.get(params.id);
      if (!program || program.utility_id !== utilityOf(principal)) throw notFound(params.id);
      return { body: toUtilityProgram(program) };
    },
  });

/** `POST {utility_base_url}/v1/programs`: a new program, announced on ProgramsTopic. */
export const utilityCreateProgram = (knex: Knex, store: ProgramStore, outbox: Outbox) =>
  operation({
    body: UtilityProgramCreate,
    async handle({ body, principal }) {
      const program = newUtilityProgram(utilityOf(principal), randomUUID(), body, new Date());
      await knex.transaction(async (trx) => {
        await store.insert(trx, program);
        await outbox.enqueue(trx, ProgramsTopic, program.id, toProgramMessage(program));
      });
      return { body: toUtilityProgram(program) };
    },
  });

/** `PATCH {utility_base_url}/v1/programs/{id}`: a change of the terms text issues a new version; every change is announced. */
export const utilityUpdateProgram = (knex: Knex, store: ProgramStore, outbox: Outbox) =>
  operation({
    params: UtilityProgramParams,
    body: UtilityProgramUpdate,
    async handle({ params, body, principal }) {
      const utilityId = utilityOf(principal);
      const program = await knex.transaction(async (trx) => {
        await store.lock(trx, params.id);
        const current = await store.get(params.id, trx);
        if (!current || current.utility_id !== utilityId) throw notFound(params.id);
        const change = applyProgramUpdate(current, body, new Date(), await store.termsVersions(trx, params.id));
        if (!change.changed) return current;
        await store.update(trx, change.program, change);
        await outbox.enqueue(trx, ProgramsTopic, change.program.id, toProgramMessage(change.program));
        return change.program;
      });
      return { body: toUtilityProgram(program) };
    },
  });
