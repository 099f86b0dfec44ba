import { ProgramsTopic } from '@efs/contracts';
import { OutboxWriter, type Knex } from '@efs/db';
import { toProgramMessage } from './domain/program.ts';
import { CATALOG_SCHEMA } from './context.ts';
import { KnexProgramStore } from './store/programStore.ts';

/** Re-announces every program as it is now (read-model repair). */
export async function announceCatalogState(trx: Knex.Transaction): Promise<number> {
  const programs = await new KnexProgramStore(trx, CATALOG_SCHEMA).list({ skip: 0, limit: Number.MAX_SAFE_INTEGER });
  await new OutboxWriter({ schema: CATALOG_SCHEMA, topics: [ProgramsTopic] }).enqueueMany(trx, ProgramsTopic, programs.map((p) => ({ key: p.id, value: toProgramMessage(p) })));
  return programs.length;
}
