import type { DeviceTypeType } from '@efs/api';
import { ProgramFields, omit } from '@efs/contracts';
import { rowMapping, type Knex } from '@efs/db';
import type { Program } from '../domain/program.ts';

export interface ProgramFilter {
  zipCode?: string | undefined;
  deviceType?: DeviceTypeType | undefined;
  utilityId?: string | undefined;
  skip: number;
  limit: number;
}

/** Persistence of the catalog. */
export interface ProgramStore {
  list(filter: ProgramFilter): Promise<Program[]>;
  /** Every program covering a zip code, in catalog order (a zip has few programs). */
  listByZip(zipCode: string): Promise<Program[]>;
  get(id: string, trx?: Knex.Transaction): Promise<Program | undefined>;
  /** Locks a program's row until the transaction ends (concurrent updates apply one after the other). */
  lock(trx: Knex.Transaction, id: string): Promise<void>;
  /** The versions its terms have had, oldest first. */
  termsVersions(trx: Knex.Transaction, id: string): Promise<string[]>;
  /** Writes a changed program; its zip codes when they changed, and the text of a new terms version. */
  update(trx: Knex.Transaction, program: Program, opts: { zipCodesChanged: boolean; newTermsVersion: string | null }): Promise<void>;
  /** Inserts a program with its zip codes and current terms; false when the id exists already. */
  insert(trx: Knex.Transaction, program: Program): Promise<boolean>;
}

type Row = Record<string, unknown>;

/** A program as read: its row, with its zip codes and current terms text joined in. */
const programRows = rowMapping(ProgramFields);

/** The columns of the programs table: zip codes and terms texts have tables of their own. */
const programColumns = rowMapping(omit(ProgramFields, ['zip_codes', 'terms_and_conditions_text']));

/** The columns a change can touch (a utility's, or the sandbox settings of a start), as stored. */
function changeableColumns(p: Program): Row {
  const { id: _id, utility_id: _owner, created_at: _created, ...changeable } = programColumns.toRow(p);
  return changeable;
}

export class KnexProgramStore implements ProgramStore {
  private readonly knex: Knex;
  private readonly schema: string;

  constructor(knex: Knex, schema: string) {
    this.knex = knex;
    this.schema = schema;
  }

  async list(filter: ProgramFilter): Promise<Program[]> {
    const q = this.select();
    if (filter.zipCode !== undefined) {
      q.whereExists(this.knex.withSchema(this.schema).table('program_zip_codes as z').whereRaw('z.program_id = p.id').andWhere('z.zip_code', filter.zipCode));
    }
    if (filter.deviceType !== undefined) q.whereRaw('p.eligible_device_types \\? ?', [filter.deviceType]);
    if (filter.utilityId !== undefined) q.where('p.utility_id', filter.utilityId);
    const rows = (await q.orderBy([{ column: 'p.created_at' }, { column: 'p.id' }]).offset(filter.skip).limit(filter.limit)) as Row[];
    return rows.map((r) => programRows.fromRow(r));
  }

  async listByZip(zipCode: string): Promise<Program[]> {
    const covering = this.knex.withSchema(this.schema).table('program_zip_codes as z').whereRaw('z.program_id = p.id').andWhere('z.zip_code', zipCode);
    const rows = (await this.select().whereExists(covering).orderBy([{ column: 'p.created_at' }, { column: 'p.id' }])) as Row[];
    return rows.map((r) => programRows.fromRow(r));
  }

  async get(id: string, trx?: Knex.Transaction): Promise<Program | undefined> {
    const row = (await this.select(trx).where('p.id', id).first()) as Row | undefined;
    return row ? programRows.fromRow(row) : undefined;
  }

  async lock(trx: Knex.Transaction, id: string): Promise<void> {
    await trx.withSchema(this.schema).table('programs').where({ id }).forUpdate().select('id');
  }

  async termsVersions(trx: Knex.Transaction, id: string): Promise<string[]> {
    const rows = (await trx.withSchema(this.schema).table('program_terms').where({ program_id: id }).orderBy('created_at').select('version')) as { version: string }[];
    return rows.map((r) => r.version);
  }

  async update(trx: Knex.Transaction, p: Program, opts: { zipCodesChanged: boolean; newTermsVersion: string | null }): Promise<void> {
    await trx
      .withSchema(this.schema)
      .table('programs')
      .where({ id: p.id })
      .update(changeableColumns(p));
    if (opts.zipCodesChanged) {
      await trx.withSchema(this.schema).table('program_zip_codes').where({ program_id: p.id }).delete();
      if (p.zip_codes.length > 0) await trx.withSchema(this.schema).table('program_zip_codes').insert(p.zip_codes.map((zip_code) => ({ program_id: p.id, zip_code })));
    }
    if (opts.newTermsVersion !== null && p.terms_and_conditions_text !== null) {
      await trx.withSchema(this.schema).table('program_terms').insert({ program_id: p.id, version: opts.newTermsVersion, text: p.terms_and_conditions_text, created_at: p.updated_at });
    }
  }

  async insert(trx: Knex.Transaction, p: Program): Promise<boolean> {
    const inserted = await trx
      .withSchema(this.schema)
      .table('programs')
      .insert(programColumns.toRow(p))
      .onConflict('id')
      .ignore()
      .returning('id');
    if (inserted.length === 0) return false;
    if (p.zip_codes.length > 0) {
      await trx.withSchema(this.schema).table('program_zip_codes').insert(p.zip_codes.map((zip_code) => ({ program_id: p.id, zip_code })));
    }
    if (p.terms_and_conditions_version !== null && p.terms_and_conditions_text !== null) {
      await trx.withSchema(this.schema).table('program_terms').insert({ program_id: p.id, version: p.terms_and_conditions_version, text: p.terms_and_conditions_text, created_at: p.updated_at });
    }
    return true;
  }

  private select(trx?: Knex.Transaction) {
    const db = trx ?? this.knex;
    const zips = db.withSchema(this.schema).table('program_zip_codes as z').select(this.knex.raw('coalesce(jsonb_agg(z.zip_code order by z.zip_code), \'[]\'::jsonb)')).whereRaw('z.program_id = p.id');
    return db
      .withSchema(this.schema)
      .table('programs as p')
      .leftJoin('program_terms as t', (j) => j.on('t.program_id', 'p.id').andOn('t.version', 'p.terms_and_conditions_version'))
      .select('p.*', 't.text as terms_and_conditions_text', zips.as('zip_codes'));
  }
}
