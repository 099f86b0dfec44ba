import { CatalogOperations } from '@efs/api';
import { ProgramsTopic } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { applyProgramUpdate, toUtilityProgram } from '../domain/utilityProgram.ts';
import { toProgramMessage } from '../domain/program.ts';
import type { ProgramReadModel } from '../store/programReadModel.ts';
import type { ProgramStore } from '../store/programStore.ts';
import { utilityOf } from '@efs/access';

/** `PATCH {utility_base_url}/v1/programs/{id}`: a change of the terms text issues a new version; every change is announced. */
export const updateUtilityProgram = (knex: Knex, store: ProgramStore, outbox: Outbox, programs: ProgramReadModel) =>
  implement(CatalogOperations.updateUtilityProgram, async ({ params, body, principal }) => {
    const utilityId = utilityOf(principal);
    const program = await knex.transaction(async (trx) => {
      await store.lock(trx, params.id);
      const current = await store.get(params.id, trx);
      if (!current || current.utility_id !== utilityId) throw Errors.NOT_FOUND(`Program ${params.id} not found`);
      const change = applyProgramUpdate(current, body, new Date(), await store.termsVersions(trx, params.id));
      if (!change.changed) return current;
      await store.update(trx, change.program, change);
      await outbox.enqueue(trx, ProgramsTopic, change.program.id, toProgramMessage(change.program));
      return change.program;
    });
    await programs.changed();
    return toUtilityProgram(program);
  });
