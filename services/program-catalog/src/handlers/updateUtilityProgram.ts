import { CatalogOperations } from '@efs/api';
import { ProgramsTopic } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { CatalogContext } from '../context.ts';
import { applyProgramUpdate, toUtilityProgram } from '../domain/utilityProgram.ts';
import { toProgramMessage } from '../domain/program.ts';
import { utilityOf } from '@efs/access';

/**
 * `PATCH {utility_base_url}/v1/programs/{id}`: a change of the terms text issues a new version; every
 * change is announced, and answered once its announcement is out (see createUtilityProgram).
 */
export const updateUtilityProgram = ({ knex, store, writes, clock }: Pick<CatalogContext, 'knex' | 'store' | 'writes' | 'clock'>) =>
  implement(CatalogOperations.updateUtilityProgram, async ({ params, body, principal }) => {
    const utilityId = utilityOf(principal);
    let announcements: string[] = [];
    const program = await knex.transaction(async (trx) => {
      await store.lock(trx, params.id);
      const current = await store.get(params.id, trx);
      if (!current || current.utility_id !== utilityId) throw Errors.NOT_FOUND(`Program ${params.id} not found`);
      const change = applyProgramUpdate(current, body, clock(), await store.termsVersions(trx, params.id));
      if (!change.changed) return current;
      await store.update(trx, change.program, change);
      announcements = await writes.outbox.enqueue(trx, ProgramsTopic, change.program.id, toProgramMessage(change.program));
      return change.program;
    });
    await writes.announced(announcements);
    return toUtilityProgram(program);
  });
