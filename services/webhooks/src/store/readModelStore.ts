import type { EnrollmentMessage } from '@efs/contracts';
import type { EventType } from '@efs/api';
import type { Knex } from '@efs/db';

/** Enrollments that hold their devices (their utility reads the devices' telemetry). */
export const OPEN_ENROLLMENT = ['PENDING', 'NEEDS_ACTION', 'ACTIVE'];

/** A device as telemetryRecipients keys it: ids are free text (a '/' may be in them), NUL never is. */
export const recipientKey = (integratorId: string, deviceId: string): string => `${integratorId}\u0000${deviceId}`;

/** What decides whom an event concerns. */
export interface EventScope {
  program_id: string;
  target_type: EventType['target_type'];
  target_ids: readonly string[];
}

/**
 * The webhooks service's read models: enrollments (who owns which devices in which program),
 * events as last announced, and the integrators each event concerns with whether each has been
 * told of it.
 */
export class KnexReadModelStore {
  private readonly schema: string;

  constructor(schema: string) {
    this.schema = schema;
  }

  /** Keeps the newer state; answers 'created' (first seen), 'updated', or null for a stale or repeated one. */
  async upsertEnrollment(trx: Knex.Transaction, e: EnrollmentMessage): Promise<'created' | 'updated' | null> {
    const { rows } = await trx.raw<{ rows: { created: boolean }[] }>(
      `insert into ??.enrollments as e (id, integrator_id, utility_id, program_id, site_id, device_ids, group_ids, status, updated_at)
       values (?, ?, ?, ?, ?, ?::text[], ?::text[], ?, ?::timestamptz)
       on conflict (id) do update set device_ids = excluded.device_ids, group_ids = excluded.group_ids, status = excluded.status, updated_at = excluded.updated_at
         where e.updated_at < excluded.updated_at
       returning (xmax = 0) as created`,
      [this.schema, e.id, e.integrator_id, e.utility_id, e.program_id, e.site_id, e.device_ids, e.group_ids, e.status, e.updated_at],
    );
    const row = rows[0];
    return row ? (row.created ? 'created' : 'updated') : null;
  }

  /**
   * The integrators with an ACTIVE enrollment that the event's targets reach, each with the
   * target ids that are its own (a SITE or DEVICE target may name another integrator's too).
   */
  async integratorsTargeted(trx: Knex.Transaction, event: EventScope): Promise<Map<string, string[]>> {
    const target =
      event.target_type === 'PROGRAM' ? `e.program_id` : event.target_type === 'SITE' ? `e.site_id` : event.target_type === 'DEVICE' ? `t.id` : `t.id`;
    const from =
      event.target_type === 'DEVICE' ? `??.enrollments e cross join lateral unnest(e.device_ids) as t(id)` : event.target_type === 'GROUP' ? `??.enrollments e cross join lateral unnest(e.group_ids) as t(id)` : `??.enrollments e`;
    const { rows } = await trx.raw<{ rows: { integrator_id: string; target: string }[] }>(
      `select distinct e.integrator_id, ${target} as target from ${from}
       where e.program_id = ? and e.status = 'ACTIVE' and ${target} = any(?::text[])`,
      [this.schema, event.program_id, [...event.target_ids]],
    );
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.integrator_id, [...(out.get(r.integrator_id) ?? []), r.target]);
    return out;
  }

  /** Keeps the event as last announced (a repeated or older announcement changes nothing). */
  async upsertEvent(trx: Knex.Transaction, utilityId: string, event: EventType): Promise<void> {
    await trx.raw(
      `insert into ??.events as ev (id, utility_id, program_id, event, updated_at) values (?, ?, ?, ?::jsonb, ?::timestamptz)
       on conflict (id) do update set event = excluded.event, updated_at = excluded.updated_at where ev.updated_at <= excluded.updated_at`,
      [this.schema, event.id, utilityId, event.program_id, JSON.stringify(event), event.updated_at],
    );
  }

  async event(trx: Knex.Transaction, id: string): Promise<EventType | null> {
    const row = (await trx.withSchema(this.schema).table('events').where({ id }).first('event')) as { event: EventType } | undefined;
    return row?.event ?? null;
  }

  /** The integrators known to be concerned by an event: whether each was told of it, and its own target ids. */
  async eventIntegrators(trx: Knex.Transaction, eventId: string): Promise<Map<string, { announced: boolean; targets: string[] }>> {
    const rows = (await trx.withSchema(this.schema).table('event_integrators').where({ event_id: eventId })) as { integrator_id: string; announced: boolean; target_ids: string[] }[];
    return new Map(rows.map((r) => [r.integrator_id, { announced: r.announced, targets: r.target_ids }]));
  }

  async markEventIntegrator(trx: Knex.Transaction, eventId: string, integratorId: string, announced: boolean, targets: readonly string[]): Promise<void> {
    await trx.raw(
      `insert into ??.event_integrators as ei (event_id, integrator_id, announced, target_ids) values (?, ?, ?, ?::text[])
       on conflict (event_id, integrator_id) do update set announced = ei.announced or excluded.announced,
         target_ids = array(select distinct unnest(ei.target_ids || excluded.target_ids))`,
      [this.schema, eventId, integratorId, announced, [...targets]],
    );
  }

  /** For each reading's device (keyed by recipientKey), the (utility, program) pairs whose open enrollments hold it. */
  async telemetryRecipients(db: Knex, devices: readonly { integratorId: string; deviceId: string }[]): Promise<Map<string, { utilityId: string; programId: string }[]>> {
    if (devices.length === 0) return new Map();
    const { rows } = await db.raw<{ rows: { integrator_id: string; device_id: string; utility_id: string; program_id: string }[] }>(
      `select distinct d.integrator_id, d.device_id, e.utility_id, e.program_id
       from unnest(?::text[], ?::text[]) as d(integrator_id, device_id)
       join ??.enrollments e on e.integrator_id = d.integrator_id and e.device_ids @> array[d.device_id] and e.status = any(?::text[])`,
      [devices.map((d) => d.integratorId), devices.map((d) => d.deviceId), this.schema, OPEN_ENROLLMENT],
    );
    const out = new Map<string, { utilityId: string; programId: string }[]>();
    for (const r of rows) {
      const k = recipientKey(r.integrator_id, r.device_id);
      out.set(k, [...(out.get(k) ?? []), { utilityId: r.utility_id, programId: r.program_id }]);
    }
    return out;
  }
}
