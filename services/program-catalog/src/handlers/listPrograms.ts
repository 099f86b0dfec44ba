import { CatalogOperations } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement, JsonReply } from '@efs/messaging';
import { toApiProgram, type Program } from '../domain/program.ts';
import type { ProgramReads } from '../store/programReadModel.ts';

/** Distinct questions whose answers are kept; past it they are all forgotten and kept again as asked. */
const KEPT_ANSWERS = 1024;

/**
 * `GET /v1/programs` (client token): the catalog, filtered by zip code and device type. The
 * catalog changes rarely and is asked the same questions again and again, so the text of each
 * answer is kept for as long as it lists the same program objects: programs are never changed
 * in place (the read model makes new objects when it reloads), so the same objects are the
 * same answer, and anything else is serialized afresh.
 */
export const listPrograms = (store: ProgramReads) => {
  const answers = new Map<string, { programs: readonly Program[]; reply: JsonReply<typeof CatalogOperations.listPrograms> }>();
  return implement(CatalogOperations.listPrograms, async ({ query }) => {
    const programs = await store.list({ zipCode: query.zip_code === undefined ? undefined : zipArea(query.zip_code), deviceType: query.device_type, skip: query.skip, limit: query.limit });
    const question = JSON.stringify([query.zip_code, query.device_type, query.skip, query.limit]);
    const known = answers.get(question);
    if (known && known.programs.length === programs.length && known.programs.every((p, i) => p === programs[i])) return known.reply;
    const reply = new JsonReply(
      CatalogOperations.listPrograms,
      programs.map((p) => toApiProgram(p)),
    );
    if (answers.size >= KEPT_ANSWERS) answers.clear();
    answers.set(question, { programs, reply });
    return reply;
  });
};
