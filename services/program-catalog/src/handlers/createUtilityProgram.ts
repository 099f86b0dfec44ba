import { randomUUID } from 'node:crypto';
import { CatalogOperations } from '@efs/api';
import { ProgramsTopic } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { implement } from '@efs/messaging';
import { newUtilityProgram, toUtilityProgram } from '../domain/utilityProgram.ts';
import { toProgramMessage } from '../domain/program.ts';
import type { ProgramReadModel } from '../store/programReadModel.ts';
import type { ProgramStore } from '../store/programStore.ts';
import { utilityOf } from '@efs/access';

/** `POST {utility_base_url}/v1/programs`: a new program, announced on ProgramsTopic. */
export const createUtilityProgram = (knex: Knex, store: ProgramStore, outbox: Outbox, programs: ProgramReadModel) =>
  implement(CatalogOperations.createUtilityProgram, async ({ body, principal }) => {
    const program = newUtilityProgram(utilityOf(principal), randomUUID(), body, new Date());
    await knex.transaction(async (trx) => {
      await store.insert(trx, program);
      await outbox.enqueue(trx, ProgramsTopic, program.id, toProgramMessage(program));
    });
    await programs.changed();
    return toUtilityProgram(program);
  });
