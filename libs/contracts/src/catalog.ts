import { avroRecord, recordType } from './fields.ts';
import { ProgramFields } from './entities/program.ts';
import { defineTopic } from './topic.ts';

/** The latest state of a program, keyed by program id on a compacted topic. */
export const ProgramSchema = avroRecord(recordType('Program', 'efs.catalog', ProgramFields));

export const ProgramsTopic = defineTopic({
  name: 'efs.catalog.programs',
  kind: 'state',
  partitions: 3,
  compacted: true,
  schema: ProgramSchema,
  fields: ProgramFields,
});
