import { CatalogOperations } from '@efs/api';
import { zipArea } from '@efs/contracts';
import { implement, JsonReply } from '@efs/messaging';
import { toApiProgram, type Program } from '../domain/program.ts';
import type { CatalogContext } from '../context.ts';

/**
 * `GET /v1/programs` (client token): the catalog, filtered by zip code and device type. The
 * catalog changes rarely and is listed again and again, so the JSON text of each program is kept
 * with the program object: programs are never changed in place (the read model makes new objects
 * when it reloads, and the old ones and their texts are then let go), and without a site's
 * devices a program's earnings are fixed, so the same object is the same text. An answer is
 * joined from its programs' texts: memory stays one text per program, whatever the questions.
 */
export const listPrograms = ({ programs }: Pick<CatalogContext, 'programs'>) => {
  const texts = new WeakMap<Program, string>();
  const textOf = (p: Program): string => {
    let text = texts.get(p);
    if (text === undefined) texts.set(p, (text = JSON.stringify(toApiProgram(p))));
    return text;
  };
  return implement(CatalogOperations.listPrograms, async ({ query }) => {
    const found = await programs.list({ zipCode: query.zip_code === undefined ? undefined : zipArea(query.zip_code), deviceType: query.device_type, skip: query.skip, limit: query.limit });
    return JsonReply.ofElements(CatalogOperations.listPrograms, found.map(textOf));
  });
};
