import type { Knex } from '@efs/db';
import type { ProgramGroup } from '../domain/group.ts';

/** Persistence of program groups. */
export interface GroupStore {
  list(db: Knex, programId: string, skip: number, limit: number): Promise<ProgramGroup[]>;
  get(db: Knex, programId: string, id: string): Promise<ProgramGroup | undefined>;
  /** The ids among `ids` that are groups of the program. */
  existing(db: Knex, programId: string, ids: readonly string[]): Promise<string[]>;
  /** False when the program has a group with that id already. */
  insert(trx: Knex.Transaction, g: ProgramGroup): Promise<boolean>;
  rename(trx: Knex.Transaction, programId: string, id: string, name: string, now: Date): Promise<ProgramGroup | undefined>;
  /** Ids of the enrollments in the group, sorted. */
  members(db: Knex, programId: string, id: string): Promise<string[]>;
  /** Deletes the group and its memberships. */
  delete(trx: Knex.Transaction, programId: string, id: string): Promise<void>;
}

interface GroupRow extends Omit<ProgramGroup, 'created_at' | 'updated_at'> {
  created_at: Date | string;
  updated_at: Date | string;
}

const toGroup = (r: GroupRow): ProgramGroup => ({ ...r, created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) });

export class KnexGroupStore implements GroupStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  async list(db: Knex, programId: string, skip: number, limit: number): Promise<ProgramGroup[]> {
    const rows = (await db
      .withSchema(this.schema)
      .table('program_groups')
      .where({ program_id: programId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .offset(skip)
      .limit(limit)) as GroupRow[];
    return rows.map(toGroup);
  }

  async get(db: Knex, programId: string, id: string): Promise<ProgramGroup | undefined> {
    const r = (await db.withSchema(this.schema).table('program_groups').where({ program_id: programId, id }).first()) as GroupRow | undefined;
    return r ? toGroup(r) : undefined;
  }

  async existing(db: Knex, programId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = (await db.withSchema(this.schema).table('program_groups').select('id').where({ program_id: programId }).whereIn('id', [...ids])) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async insert(trx: Knex.Transaction, g: ProgramGroup): Promise<boolean> {
    const rows = await trx.withSchema(this.schema).table('program_groups').insert(g).onConflict(['program_id', 'id']).ignore().returning('id');
    return rows.length > 0;
  }

  async rename(trx: Knex.Transaction, programId: string, id: string, name: string, now: Date): Promise<ProgramGroup | undefined> {
    const rows = (await trx.withSchema(this.schema).table('program_groups').where({ program_id: programId, id }).update({ name, updated_at: now }).returning('*')) as GroupRow[];
    return rows[0] ? toGroup(rows[0]) : undefined;
  }

  async members(db: Knex, programId: string, id: string): Promise<string[]> {
    const rows = (await db.withSchema(this.schema).table('enrollment_groups').select('enrollment_id').where({ program_id: programId, group_id: id }).orderBy('enrollment_id')) as { enrollment_id: string }[];
    return rows.map((m) => m.enrollment_id);
  }

  async delete(trx: Knex.Transaction, programId: string, id: string): Promise<void> {
    await trx.withSchema(this.schema).table('program_groups').where({ program_id: programId, id }).delete();
  }
}
