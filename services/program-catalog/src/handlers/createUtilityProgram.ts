import { randomUUID } from 'node:crypto';
import { CatalogOperations } from '@efs/api';
import { ProgramsTopic } from '@efs/contracts';
import { implement } from '@efs/messaging';
import type { CatalogContext } from '../context.ts';
import { newUtilityProgram, toUtilityProgram } from '../domain/utilityProgram.ts';
import { toProgramMessage } from '../domain/program.ts';
import { utilityOf } from '@efs/access';

/**
 * `POST {utility_base_url}/v1/programs`: a new program, announced on ProgramsTopic; answered once
 * the announcement is out (`ProgramWrites.announced`), so a commission sent after the answer is
 * offered it.
 */
export const createUtilityProgram = ({ knex, store, writes, clock }: Pick<CatalogContext, 'knex' | 'store' | 'writes' | 'clock'>) =>
  implement(CatalogOperations.createUtilityProgram, async ({ body, principal }) => {
    const program = newUtilityProgram(utilityOf(principal), randomUUID(), body, clock());
    const announcements = await knex.transaction(async (trx) => {
      await store.insert(trx, program);
      return writes.outbox.enqueue(trx, ProgramsTopic, program.id, toProgramMessage(program));
    });
    await writes.announced(announcements);
    return toUtilityProgram(program);
  });
