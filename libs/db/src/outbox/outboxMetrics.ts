import type { Knex } from 'knex';
import { addScrapeGauges } from '@efs/telemetry';
import { boundedRead } from '../boundedRead.ts';

/** Rows counted at most: a count of a huge backlog would be the slow query a scrape must not run. */
export const WAITING_COUNT_CAP = 100_000;

/**
 * How long a scrape waits for the outbox query, below the scrape's own bound (scrapeMetrics, 3 s):
 * a slow database leaves these series out of the scrape instead of holding it.
 */
export const OUTBOX_SCRAPE_TIMEOUT_MS = 2000;

/** What the query answers about a schema's outbox. */
export interface OutboxState {
  waiting: number;
  oldestAgeSeconds: number;
  quarantined: number;
}

/**
 * One statement, three cheap reads: the rows waiting (counted up to WAITING_COUNT_CAP), the age of
 * the oldest (the lowest seq, through its index; the database's clock, as created_at is), the
 * rows quarantined and not discarded.
 */
export async function readOutboxState(knex: Knex, schema: string): Promise<OutboxState> {
  const result = (await boundedRead(knex, OUTBOX_SCRAPE_TIMEOUT_MS, (trx) => trx.raw(
    `select
       (select count(*) from (select 1 from ??.outbox limit ${WAITING_COUNT_CAP}) w) as waiting,
       (select extract(epoch from clock_timestamp() - created_at) from ??.outbox order by seq limit 1) as oldest,
       (select count(*) from ??.outbox_quarantine where discarded_at is null) as quarantined`,
    [schema, schema, schema],
  ))) as { rows: { waiting: string | number; oldest: string | number | null; quarantined: string | number }[] };
  const row = result.rows[0]!;
  return { waiting: Number(row.waiting), oldestAgeSeconds: Math.max(0, Number(row.oldest ?? 0)), quarantined: Number(row.quarantined) };
}

const WAITING = { name: 'efs.outbox.rows.waiting', description: `Outbox rows not yet published (counted up to ${WAITING_COUNT_CAP}), by service`, unit: '{row}' };
const OLDEST_AGE = { name: 'efs.outbox.oldest_age_seconds', description: 'Age of the oldest outbox row not yet published (0 when none), by service', unit: 's' };
const QUARANTINED = { name: 'efs.outbox.rows.quarantined', description: 'Outbox rows set aside because they could not be published, not discarded, by service', unit: '{row}' };

/**
 * Reads a schema's outbox at every scrape (addScrapeGauges), labelled with the service that owns
 * it: efs.outbox.rows.waiting, efs.outbox.oldest_age_seconds (0 when empty) and
 * efs.outbox.rows.quarantined. Nothing runs between scrapes. A scrape that comes while the
 * previous one's query still runs waits for that one (no pile-up on a slow database); after
 * OUTBOX_SCRAPE_TIMEOUT_MS the scrape answers without these series. Answers the function that
 * stops reading.
 */
export function observeOutbox(knex: Knex, schema: string, service: string): () => void {
  const attrs = { service };
  let reading: Promise<OutboxState> | undefined;
  return addScrapeGauges(async (observe) => {
    reading ??= readOutboxState(knex, schema).finally(() => (reading = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the ${schema} outbox did not answer within ${OUTBOX_SCRAPE_TIMEOUT_MS} ms`)), OUTBOX_SCRAPE_TIMEOUT_MS)));
    try {
      const state = await Promise.race([reading, late]);
      observe(WAITING, state.waiting, attrs);
      observe(OLDEST_AGE, state.oldestAgeSeconds, attrs);
      observe(QUARANTINED, state.quarantined, attrs);
    } finally {
      clearTimeout(timer);
    }
  });
}
