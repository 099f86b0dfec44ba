import type { Knex } from '@efs/db';
import type { EnrollmentMessage, ProgramMessage } from '@efs/contracts';
import type { DeviceRef } from './readingStore.ts';

/** Enrollment statuses whose devices a utility may read the telemetry of (decisions.md, Telemetry). */
export const CURRENT_STATUSES = ['PENDING', 'NEEDS_ACTION', 'ACTIVE'] as const;

/**
 * What telemetry-ingest knows of programs (whose they are) and enrollments (which devices are
 * enrolled where), from the catalog's and enrollment's state topics. Upserts never put an older
 * version over a newer one, so redelivered or reordered messages change nothing.
 */
export interface ReadModelStore {
  upsertProgram(db: Knex, p: Pick<ProgramMessage, 'id' | 'utility_id' | 'updated_at'>): Promise<void>;
  upsertEnrollment(db: Knex, e: Pick<EnrollmentMessage, 'id' | 'utility_id' | 'program_id' | 'integrator_id' | 'site_id' | 'device_ids' | 'status' | 'updated_at'>): Promise<void>;
  /** The program's owner, or undefined for a program not (yet) known. */
  programUtility(db: Knex, programId: string): Promise<string | undefined>;
  /** Devices with a current enrollment in the program, optionally only those with the given ids. */
  currentDevices(db: Knex, programId: string, deviceIds?: readonly string[]): Promise<DeviceRef[]>;
}

export class KnexReadModelStore implements ReadModelStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  async upsertProgram(db: Knex, p: Pick<ProgramMessage, 'id' | 'utility_id' | 'updated_at'>): Promise<void> {
    await this.upsert(db, 'programs', { id: p.id, utility_id: p.utility_id, updated_at: p.updated_at });
  }

  async upsertEnrollment(db: Knex, e: Pick<EnrollmentMessage, 'id' | 'utility_id' | 'program_id' | 'integrator_id' | 'site_id' | 'device_ids' | 'status' | 'updated_at'>): Promise<void> {
    await this.upsert(db, 'enrollments', {
      id: e.id,
      utility_id: e.utility_id,
      program_id: e.program_id,
      integrator_id: e.integrator_id,
      site_id: e.site_id,
      device_ids: JSON.stringify(e.device_ids),
      status: e.status,
      updated_at: e.updated_at,
    });
  }

  async programUtility(db: Knex, programId: string): Promise<string | undefined> {
    const r = (await db.withSchema(this.schema).table('programs').where({ id: programId }).first('utility_id')) as { utility_id: string } | undefined;
    return r?.utility_id;
  }

  async currentDevices(db: Knex, programId: string, deviceIds?: readonly string[]): Promise<DeviceRef[]> {
    const rows = await db.raw(
      `select distinct e.integrator_id, d.device_id from "${this.schema}".enrollments e
       cross join lateral jsonb_array_elements_text(e.device_ids) as d(device_id)
       where e.program_id = ? and e.status = any(?::text[]) ${deviceIds ? 'and d.device_id = any(?::text[])' : ''}
       order by 1, 2`,
      [programId, [...CURRENT_STATUSES], ...(deviceIds ? [[...deviceIds]] : [])],
    );
    return rows.rows as DeviceRef[];
  }

  private async upsert(db: Knex, table: string, row: Record<string, unknown>): Promise<void> {
    await db
      .withSchema(this.schema)
      .table(table)
      .insert(row)
      .onConflict('id')
      .merge()
      .where(db.raw(`${table}.updated_at::timestamptz <= excluded.updated_at::timestamptz`));
  }
}
