import type { CommandStatusType, DeviceStatusType } from '@efs/api';
import { copyInto, type Database, type Knex } from '@efs/db';
import type { Command } from '../domain/command.ts';
import { UUID } from './eventStore.ts';

export interface CommandFilter {
  status?: CommandStatusType[] | undefined;
  deviceStatus?: DeviceStatusType[] | undefined;
  siteId?: string | undefined;
  deviceId?: string | undefined;
  updatedSince?: Date | undefined;
  skip: number;
  limit: number;
}

/** Which commands a bulk change reaches; always only those not ended by `now` and not canceled. */
export type CommandScope =
  | { eventId: string }
  | { integratorId: string; siteId: string; deviceId: string }
  /** Commands created by `createdBy` (a later enrollment of the same devices has commands of its own). */
  | { programId: string; integratorId: string; siteId: string; deviceIds: readonly string[]; createdBy: Date };

/** Persistence of commands. */
export interface CommandStore {
  /**
   * Inserts with COPY; a command already there (same event, action, integrator and device) is
   * skipped, and the commands given hold no two with that key. Returns those inserted. The caller
   * holds the lock of the commands' events (see FanOut).
   */
  insertMany(trx: Knex.Transaction, commands: readonly Command[]): Promise<Command[]>;
  /** Writes every field that changes after creation. */
  updateMany(trx: Knex.Transaction, commands: readonly Command[]): Promise<void>;
  list(db: Knex, integratorId: string, f: CommandFilter): Promise<Command[]>;
  /** The command if it is the integrator's (and of the site, when given). */
  find(db: Knex, id: string, scope: { integratorId: string; siteId?: string }, lock?: { forUpdate?: boolean }): Promise<Command | undefined>;
  forEvent(db: Knex, eventId: string): Promise<Command[]>;
  forSiteInEvent(db: Knex, eventId: string, integratorId: string, siteId: string, lock?: { forUpdate?: boolean }): Promise<Command[]>;
  forSitesInEvent(db: Knex, eventId: string, sites: readonly { integrator_id: string; site_id: string }[]): Promise<Command[]>;
  forSiteInEvents(db: Knex, integratorId: string, siteId: string, eventIds: readonly string[]): Promise<Command[]>;
  forDevice(db: Knex, integratorId: string, siteId: string, deviceId: string, skip: number, limit: number): Promise<Command[]>;
  /** Cancels (CANCELED, no more phases) the scope's commands not ended by `now`; returns them as they now are. */
  cancel(trx: Knex.Transaction, scope: CommandScope, now: Date): Promise<Command[]>;
  /** Sets the effective reserve of the device's commands that follow its own level; returns those changed. */
  followDeviceLevel(trx: Knex.Transaction, d: { integratorId: string; siteId: string; deviceId: string }, level: number, now: Date): Promise<Command[]>;
  /** When the next phase of a command falls due (no lock; null when none will): the scheduler's idle read. */
  nextPhaseDueAt(db: Knex): Promise<Date | null>;
  /** Commands whose next phase is due by `now`, locked; rows another replica holds are skipped. */
  lockDuePhases(trx: Knex.Transaction, now: Date, limit: number): Promise<Command[]>;
}

interface CommandRow extends Omit<Command, 'starts_at' | 'ends_at' | 'setpoint_w' | 'phase_due_at' | 'created_at' | 'updated_at'> {
  starts_at: Date | string;
  ends_at: Date | string;
  setpoint_w: string | number | null;
  phase_due_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const toCommand = (r: CommandRow): Command => ({
  ...r,
  starts_at: new Date(r.starts_at),
  ends_at: new Date(r.ends_at),
  setpoint_w: r.setpoint_w === null ? null : Number(r.setpoint_w),
  phase_due_at: r.phase_due_at === null ? null : new Date(r.phase_due_at),
  created_at: new Date(r.created_at),
  updated_at: new Date(r.updated_at),
});

/** Every column of a command, in the order COPY writes them. */
const COLUMNS = [
  'id', 'event_id', 'action_index', 'utility_id', 'program_id', 'integrator_id', 'site_id', 'device_id', 'starts_at', 'ends_at', 'mode', 'power_mode',
  'setpoint_w', 'enable_grid_import', 'action_reserve_percentage', 'user_reserve_percentage', 'backup_reserve_percentage', 'reserve_source', 'status',
  'opted_out', 'device_status', 'device_status_reason', 'phase', 'phase_due_at', 'created_at', 'updated_at',
] as const satisfies readonly (keyof Command)[];

/** The fields a command changes after creation, with their SQL types (for a multi-row UPDATE … FROM VALUES). */
const MUTABLE = [
  ['status', 'text'],
  ['opted_out', 'boolean'],
  ['user_reserve_percentage', 'integer'],
  ['backup_reserve_percentage', 'integer'],
  ['reserve_source', 'text'],
  ['device_status', 'text'],
  ['device_status_reason', 'text'],
  ['phase', 'text'],
  ['phase_due_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
] as const satisfies readonly (readonly [keyof Command, string])[];

/** Rows per statement: Postgres takes at most 65,535 parameters. */
const rowsPerStatement = (columns: number) => Math.floor(60_000 / columns);

export class KnexCommandStore implements CommandStore {
  private readonly schema: string;
  private readonly kind: Database['kind'];

  constructor(schema: string, kind: Database['kind']) {
    this.schema = schema;
    this.kind = kind;
  }

  private t(db: Knex, table = 'commands') {
    return db.withSchema(this.schema).table(table);
  }

  async insertMany(trx: Knex.Transaction, commands: readonly Command[]): Promise<Command[]> {
    // The commands carry no duplicate of the table's key (event, action, integrator, device): the
    // targets resolve each device once (distinctDevices), before the split shares the setpoint.
    if (commands.length === 0) return [];
    const rows = commands.map((c) => COLUMNS.map((k) => c[k]));
    const eventIds = [...new Set(commands.map((c) => c.event_id))];
    const existing = await this.t(trx).whereIn('event_id', eventIds).first('id');
    if (existing === undefined) {
      // None of these events has a command yet, and only the fan-out holding the event's lock
      // writes them: nothing can conflict, so the rows go straight in with COPY.
      await copyInto(trx, this.kind, `"${this.schema}".commands`, COLUMNS, rows);
      return [...commands];
    }
    // Some are there already (a fan-out run again): COPY to a staging table, then insert those
    // the one-per-device-and-action key does not refuse.
    await trx.raw(`create temp table if not exists commands_stage (like ??.commands) on commit delete rows`, [this.schema]);
    await copyInto(trx, this.kind, 'commands_stage', COLUMNS, rows);
    const result = (await trx.raw(
      `insert into ??.commands (${COLUMNS.join(', ')}) select ${COLUMNS.join(', ')} from commands_stage
       on conflict (event_id, action_index, integrator_id, device_id) do nothing returning id`,
      [this.schema],
    )) as { rows: { id: string }[] };
    await trx.raw('truncate commands_stage');
    const inserted = new Set(result.rows.map((r) => r.id));
    return commands.filter((c) => inserted.has(c.id));
  }

  async updateMany(trx: Knex.Transaction, commands: readonly Command[]): Promise<void> {
    const size = rowsPerStatement(MUTABLE.length + 1);
    for (let i = 0; i < commands.length; i += size) {
      const chunk = commands.slice(i, i + size);
      const tuple = `(?::uuid, ${MUTABLE.map(([, type]) => `?::${type}`).join(', ')})`;
      const bindings = chunk.flatMap((c) => [c.id, ...MUTABLE.map(([k]) => c[k])]);
      await trx.raw(
        `update ??.commands as c set ${MUTABLE.map(([k]) => `${k} = v.${k}`).join(', ')}
         from (values ${chunk.map(() => tuple).join(', ')}) as v(id, ${MUTABLE.map(([k]) => k).join(', ')})
         where c.id = v.id`,
        [this.schema, ...bindings],
      );
    }
  }

  async list(db: Knex, integratorId: string, f: CommandFilter): Promise<Command[]> {
    const q = this.t(db).where({ integrator_id: integratorId });
    if (f.status?.length) q.whereIn('status', f.status);
    if (f.deviceStatus?.length) q.whereIn('device_status', f.deviceStatus);
    if (f.siteId !== undefined) q.where('site_id', f.siteId);
    if (f.deviceId !== undefined) q.where('device_id', f.deviceId);
    if (f.updatedSince !== undefined) q.where('updated_at', '>=', f.updatedSince);
    const rows = (await q.orderBy([{ column: 'updated_at' }, { column: 'id' }]).offset(f.skip).limit(f.limit)) as CommandRow[];
    return rows.map(toCommand);
  }

  async find(db: Knex, id: string, scope: { integratorId: string; siteId?: string }, lock: { forUpdate?: boolean } = {}): Promise<Command | undefined> {
    if (!UUID.test(id)) return undefined;
    const q = this.t(db).where({ id, integrator_id: scope.integratorId });
    if (scope.siteId !== undefined) q.where({ site_id: scope.siteId });
    if (lock.forUpdate) q.forUpdate();
    const r = (await q.first()) as CommandRow | undefined;
    return r ? toCommand(r) : undefined;
  }

  async forEvent(db: Knex, eventId: string): Promise<Command[]> {
    return ((await this.t(db).where({ event_id: eventId }).orderBy([{ column: 'action_index' }, { column: 'integrator_id' }, { column: 'site_id' }, { column: 'device_id' }])) as CommandRow[]).map(toCommand);
  }

  async forSiteInEvent(db: Knex, eventId: string, integratorId: string, siteId: string, lock: { forUpdate?: boolean } = {}): Promise<Command[]> {
    const q = this.t(db).where({ event_id: eventId, integrator_id: integratorId, site_id: siteId }).orderBy([{ column: 'action_index' }, { column: 'device_id' }]);
    if (lock.forUpdate) q.forUpdate();
    return ((await q) as CommandRow[]).map(toCommand);
  }

  async forSitesInEvent(db: Knex, eventId: string, sites: readonly { integrator_id: string; site_id: string }[]): Promise<Command[]> {
    if (sites.length === 0) return [];
    const rows = (await this.t(db)
      .where({ event_id: eventId })
      .whereIn(['integrator_id', 'site_id'], sites.map((s) => [s.integrator_id, s.site_id]))
      .orderBy([{ column: 'action_index' }, { column: 'device_id' }])) as CommandRow[];
    return rows.map(toCommand);
  }

  async forSiteInEvents(db: Knex, integratorId: string, siteId: string, eventIds: readonly string[]): Promise<Command[]> {
    if (eventIds.length === 0) return [];
    const rows = (await this.t(db).where({ integrator_id: integratorId, site_id: siteId }).whereIn('event_id', [...eventIds]).orderBy([{ column: 'action_index' }, { column: 'device_id' }])) as CommandRow[];
    return rows.map(toCommand);
  }

  async forDevice(db: Knex, integratorId: string, siteId: string, deviceId: string, skip: number, limit: number): Promise<Command[]> {
    const rows = (await this.t(db)
      .where({ integrator_id: integratorId, site_id: siteId, device_id: deviceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .offset(skip)
      .limit(limit)) as CommandRow[];
    return rows.map(toCommand);
  }

  async cancel(trx: Knex.Transaction, scope: CommandScope, now: Date): Promise<Command[]> {
    const q = this.t(trx).whereNot('status', 'CANCELED').where('ends_at', '>', now);
    if ('eventId' in scope) q.where({ event_id: scope.eventId });
    else if ('deviceIds' in scope) {
      q.where({ program_id: scope.programId, integrator_id: scope.integratorId, site_id: scope.siteId }).whereIn('device_id', [...scope.deviceIds]).where('created_at', '<=', scope.createdBy);
    }
    else q.where({ integrator_id: scope.integratorId, site_id: scope.siteId, device_id: scope.deviceId });
    const rows = (await q.update({ status: 'CANCELED', phase_due_at: null, updated_at: now }).returning('*')) as CommandRow[];
    return rows.map(toCommand);
  }

  async followDeviceLevel(trx: Knex.Transaction, d: { integratorId: string; siteId: string; deviceId: string }, level: number, now: Date): Promise<Command[]> {
    const rows = (await this.t(trx)
      .where({ integrator_id: d.integratorId, site_id: d.siteId, device_id: d.deviceId, reserve_source: 'DEVICE' })
      .whereNot('status', 'CANCELED')
      .whereNot('backup_reserve_percentage', level)
      .where('ends_at', '>', now)
      .update({ backup_reserve_percentage: level, updated_at: now })
      .returning('*')) as CommandRow[];
    return rows.map(toCommand);
  }

  async nextPhaseDueAt(db: Knex): Promise<Date | null> {
    const row = (await this.t(db).min({ at: 'phase_due_at' }).first()) as { at: Date | string | null } | undefined;
    return row?.at === null || row?.at === undefined ? null : new Date(row.at);
  }

  async lockDuePhases(trx: Knex.Transaction, now: Date, limit: number): Promise<Command[]> {
    const rows = (await this.withPhaseDue(trx, now).orderBy('phase_due_at').limit(limit).forUpdate().skipLocked()) as CommandRow[];
    return rows.map(toCommand);
  }

  private withPhaseDue(db: Knex, now: Date) {
    return this.t(db).whereNotNull('phase_due_at').where('phase_due_at', '<=', now);
  }
}
