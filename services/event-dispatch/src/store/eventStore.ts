import type { EventStatusType, TargetTypeType } from '@efs/api';
import { boundedRead, type Knex } from '@efs/db';
import { loadAction, storeAction, type StoredAction } from '../domain/actions.ts';
import type { DrEvent, EventSiteRow } from '../domain/event.ts';
import type { StatusCondition } from '../domain/eventStatus.ts';
import type { ResolvedTarget } from '../domain/targets.ts';

export interface EventFilter {
  programId?: string | undefined;
  /** Events in any of these (as of the conditions' clock); undefined means every status. */
  statuses?: StatusCondition[] | undefined;
  skip: number;
  limit: number;
}

export interface LockOptions {
  forUpdate?: boolean;
}

/** Persistence of events and of the sites they reach. */
export interface EventStore {
  insert(trx: Knex.Transaction, e: DrEvent): Promise<void>;
  /** Writes the fields that change after creation (status, cancellation, fan-out, timestamps). */
  update(trx: Knex.Transaction, e: DrEvent): Promise<void>;
  /** The event, if it is `utilityId`'s (when given). */
  find(db: Knex, id: string, scope?: { utilityId?: string }, lock?: LockOptions): Promise<DrEvent | undefined>;
  listForUtility(db: Knex, utilityId: string, f: EventFilter): Promise<DrEvent[]>;
  /**
   * When the next status transition falls due, and when the oldest event (not canceled) whose
   * commands were never announced was created (no lock; null when there is none): the scheduler's one idle read.
   */
  nextDue(db: Knex): Promise<{ transitionAt: Date | null; unannouncedSince: Date | null }>;
  /** How many events are in each status at `now` (statusAt), the query given at most `timeoutMs` of the database. */
  countByStatus(db: Knex, now: Date, timeoutMs: number): Promise<Record<EventStatusType, number>>;
  /** Events with a status transition due by `now`, locked; rows another replica holds are skipped. */
  lockDueTransitions(trx: Knex.Transaction, now: Date, limit: number): Promise<DrEvent[]>;
  /** Ids of events created before `before`, not canceled, whose commands were never created or never announced. */
  pendingFanOut(db: Knex, before: Date, limit: number): Promise<string[]>;
  insertSites(trx: Knex.Transaction, rows: readonly EventSiteRow[]): Promise<void>;
  updateSite(trx: Knex.Transaction, row: EventSiteRow): Promise<void>;
  findSite(db: Knex, eventId: string, integratorId: string, siteId: string, lock?: LockOptions): Promise<EventSiteRow | undefined>;
  listSites(db: Knex, eventId: string, skip: number, limit: number): Promise<EventSiteRow[]>;
  /** The events a site is reached by, newest `starts_at` first, with the site's participation. */
  listForSite(db: Knex, integratorId: string, siteId: string, f: Omit<EventFilter, 'programId'>): Promise<{ event: DrEvent; site: EventSiteRow }[]>;
}

interface EventRow {
  id: string;
  utility_id: string;
  program_id: string;
  target_type: TargetTypeType;
  target_ids: string[] | string;
  resolved_targets: ResolvedTarget[] | string | null;
  actions: StoredAction[] | string;
  minimum_reserve_percentage: number;
  starts_at: Date | string;
  ends_at: Date | string;
  status: EventStatusType;
  next_transition_at: Date | string | null;
  canceled_at: Date | string | null;
  commands_created_at: Date | string | null;
  commands_announced_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

type SiteRow = Omit<EventSiteRow, 'created_at' | 'updated_at'> & { created_at: Date | string; updated_at: Date | string };

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const toEvent = (r: EventRow): DrEvent => ({
  id: r.id,
  utility_id: r.utility_id,
  program_id: r.program_id,
  target_type: r.target_type,
  target_ids: json(r.target_ids),
  resolved_targets: r.resolved_targets === null ? null : json(r.resolved_targets),
  actions: json(r.actions).map(loadAction),
  minimum_reserve_percentage: r.minimum_reserve_percentage,
  starts_at: new Date(r.starts_at),
  ends_at: new Date(r.ends_at),
  status: r.status,
  next_transition_at: date(r.next_transition_at),
  canceled_at: date(r.canceled_at),
  commands_created_at: date(r.commands_created_at),
  commands_announced_at: date(r.commands_announced_at),
  created_at: new Date(r.created_at),
  updated_at: new Date(r.updated_at),
});

const toSite = (r: SiteRow): EventSiteRow => ({ ...r, created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) });

/** Adds "in any of these statuses" to a query of events aliased `e`. */
export function whereStatuses(q: Knex.QueryBuilder, conditions: readonly StatusCondition[] | undefined): Knex.QueryBuilder {
  if (conditions === undefined) return q;
  if (conditions.length === 0) return q.whereRaw('false');
  return q.where((w) => {
    for (const c of conditions) {
      w.orWhere((x) => {
        if (c.status === 'CANCELED') return x.whereNotNull('e.canceled_at');
        x.whereNull('e.canceled_at');
        if (c.status === 'UPCOMING') x.where('e.starts_at', '>', c.startsAfter);
        else if (c.status === 'IN_PROGRESS') x.where('e.starts_at', '<=', c.startedBy).where('e.ends_at', '>', c.endsAfter);
        else x.where('e.ends_at', '<=', c.endedBy);
      });
    }
  });
}

export class KnexEventStore implements EventStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  private t(db: Knex, table: string) {
    return db.withSchema(this.schema).table(table);
  }

  async insert(trx: Knex.Transaction, e: DrEvent): Promise<void> {
    await this.t(trx, 'events').insert({
      id: e.id,
      utility_id: e.utility_id,
      program_id: e.program_id,
      target_type: e.target_type,
      target_ids: JSON.stringify(e.target_ids),
      resolved_targets: e.resolved_targets === null ? null : JSON.stringify(e.resolved_targets),
      actions: JSON.stringify(e.actions.map(storeAction)),
      minimum_reserve_percentage: e.minimum_reserve_percentage,
      starts_at: e.starts_at,
      ends_at: e.ends_at,
      status: e.status,
      next_transition_at: e.next_transition_at,
      canceled_at: e.canceled_at,
      commands_created_at: e.commands_created_at,
      commands_announced_at: e.commands_announced_at,
      created_at: e.created_at,
      updated_at: e.updated_at,
    });
  }

  async update(trx: Knex.Transaction, e: DrEvent): Promise<void> {
    await this.t(trx, 'events').where({ id: e.id }).update({
      status: e.status,
      next_transition_at: e.next_transition_at,
      canceled_at: e.canceled_at,
      commands_created_at: e.commands_created_at,
      commands_announced_at: e.commands_announced_at,
      updated_at: e.updated_at,
    });
  }

  async find(db: Knex, id: string, scope: { utilityId?: string } = {}, lock: LockOptions = {}): Promise<DrEvent | undefined> {
    if (!UUID.test(id)) return undefined;
    const q = this.t(db, 'events').where({ id });
    if (scope.utilityId !== undefined) q.where({ utility_id: scope.utilityId });
    if (lock.forUpdate) q.forUpdate();
    const r = (await q.first()) as EventRow | undefined;
    return r ? toEvent(r) : undefined;
  }

  async listForUtility(db: Knex, utilityId: string, f: EventFilter): Promise<DrEvent[]> {
    const q = this.t(db, 'events as e').select('e.*').where('e.utility_id', utilityId);
    if (f.programId !== undefined) q.where('e.program_id', f.programId);
    whereStatuses(q, f.statuses);
    const rows = (await q.orderBy([{ column: 'e.starts_at', order: 'desc' }, { column: 'e.created_at', order: 'desc' }, { column: 'e.id' }]).offset(f.skip).limit(f.limit)) as EventRow[];
    return rows.map(toEvent);
  }

  async nextDue(db: Knex): Promise<{ transitionAt: Date | null; unannouncedSince: Date | null }> {
    // Two index-only minimums (events_next_transition, events_fan_out_pending) in one round trip.
    const { rows } = await db.raw<{ rows: { transition_at: Date | string | null; unannounced_since: Date | string | null }[] }>(
      `select (select min(next_transition_at) from ??.events) as transition_at,
              (select min(created_at) from ??.events where commands_announced_at is null and canceled_at is null) as unannounced_since`,
      [this.schema, this.schema],
    );
    const row = rows[0];
    return { transitionAt: dateOrNull(row?.transition_at), unannouncedSince: dateOrNull(row?.unannounced_since) };
  }

  async countByStatus(db: Knex, now: Date, timeoutMs: number): Promise<Record<EventStatusType, number>> {
    return boundedRead(db, timeoutMs, async (trx) => {
      // The conditions of statusAt, over every event: a utility's events number a few a day.
      const { rows } = await trx.raw<{ rows: { upcoming: number; in_progress: number; completed: number; canceled: number }[] }>(
        `select count(*) filter (where canceled_at is null and starts_at > ?::timestamptz)::int as upcoming,
                count(*) filter (where canceled_at is null and starts_at <= ?::timestamptz and ends_at > ?::timestamptz)::int as in_progress,
                count(*) filter (where canceled_at is null and ends_at <= ?::timestamptz)::int as completed,
                count(*) filter (where canceled_at is not null)::int as canceled
         from ??.events`,
        [now.toISOString(), now.toISOString(), now.toISOString(), now.toISOString(), this.schema],
      );
      const r = rows[0];
      return { UPCOMING: r?.upcoming ?? 0, IN_PROGRESS: r?.in_progress ?? 0, COMPLETED: r?.completed ?? 0, CANCELED: r?.canceled ?? 0 };
    });
  }

  async lockDueTransitions(trx: Knex.Transaction, now: Date, limit: number): Promise<DrEvent[]> {
    const rows = (await this.withTransitionDue(trx, now).orderBy('next_transition_at').limit(limit).forUpdate().skipLocked()) as EventRow[];
    return rows.map(toEvent);
  }

  private withTransitionDue(db: Knex, now: Date) {
    return this.t(db, 'events').whereNotNull('next_transition_at').where('next_transition_at', '<=', now);
  }

  async pendingFanOut(db: Knex, before: Date, limit: number): Promise<string[]> {
    // A canceled event needs no commands (fan-out skips it), and would otherwise stay here for good.
    const rows = (await this.t(db, 'events').select('id').whereNull('commands_announced_at').whereNull('canceled_at').where('created_at', '<', before).orderBy('created_at').limit(limit)) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async insertSites(trx: Knex.Transaction, rows: readonly EventSiteRow[]): Promise<void> {
    // Six columns a row: well under Postgres's 65,535 parameters per statement.
    for (let i = 0; i < rows.length; i += 5000) await this.t(trx, 'event_sites').insert(rows.slice(i, i + 5000)).onConflict(['event_id', 'integrator_id', 'site_id']).ignore();
  }

  async updateSite(trx: Knex.Transaction, row: EventSiteRow): Promise<void> {
    await this.t(trx, 'event_sites').where({ event_id: row.event_id, integrator_id: row.integrator_id, site_id: row.site_id }).update({ is_participating: row.is_participating, updated_at: row.updated_at });
  }

  async findSite(db: Knex, eventId: string, integratorId: string, siteId: string, lock: LockOptions = {}): Promise<EventSiteRow | undefined> {
    if (!UUID.test(eventId)) return undefined;
    const q = this.t(db, 'event_sites').where({ event_id: eventId, integrator_id: integratorId, site_id: siteId });
    if (lock.forUpdate) q.forUpdate();
    const r = (await q.first()) as SiteRow | undefined;
    return r ? toSite(r) : undefined;
  }

  async listSites(db: Knex, eventId: string, skip: number, limit: number): Promise<EventSiteRow[]> {
    const rows = (await this.t(db, 'event_sites')
      .where({ event_id: eventId })
      .orderBy([{ column: 'created_at' }, { column: 'site_id' }, { column: 'integrator_id' }])
      .offset(skip)
      .limit(limit)) as SiteRow[];
    return rows.map(toSite);
  }

  async listForSite(db: Knex, integratorId: string, siteId: string, f: Omit<EventFilter, 'programId'>): Promise<{ event: DrEvent; site: EventSiteRow }[]> {
    const q = this.t(db, 'event_sites as s')
      .join(`events as e`, 'e.id', 's.event_id')
      .where({ 's.integrator_id': integratorId, 's.site_id': siteId })
      .select('e.*', 's.is_participating as site_is_participating', 's.created_at as site_created_at', 's.updated_at as site_updated_at');
    whereStatuses(q, f.statuses);
    const rows = (await q.orderBy([{ column: 'e.starts_at', order: 'desc' }, { column: 'e.created_at', order: 'desc' }, { column: 'e.id' }]).offset(f.skip).limit(f.limit)) as (EventRow & {
      site_is_participating: boolean;
      site_created_at: Date | string;
      site_updated_at: Date | string;
    })[];
    return rows.map((r) => ({
      event: toEvent(r),
      site: { event_id: r.id, integrator_id: integratorId, site_id: siteId, is_participating: r.site_is_participating, created_at: new Date(r.site_created_at), updated_at: new Date(r.site_updated_at) },
    }));
  }
}

const dateOrNull = (v: Date | string | null | undefined): Date | null => (v === null || v === undefined ? null : new Date(v));
