import { poolStats, type Database } from '@efs/db';
import type { HttpServer } from '@efs/http';
import { droppedLogLines, type Logger } from '@efs/logging';
import { meter, scrapeMetrics, type BatchObservableResult } from '@efs/telemetry';

/**
 * What the process as a whole holds, read at scrape time (nothing runs between scrapes): the
 * database pool (db.client.connection.count by state, db.client.connection.pending_requests)
 * and the log lines dropped because the log destination was behind (efs.log.lines.dropped).
 * They carry the process's `service` (every service of the main command shares one pool).
 * Answers the function that removes the callbacks (a test may start another process in this one).
 */
export function processMetrics(db: Database): () => void {
  const m = meter();
  const used = { 'db.client.connection.state': 'used' };
  const idle = { 'db.client.connection.state': 'idle' };
  const connections = m.createObservableGauge('db.client.connection.count', { description: 'Connections of the database pool, by state', unit: '{connection}' });
  const pending = m.createObservableGauge('db.client.connection.pending_requests', { description: 'Requests waiting for a connection of the database pool', unit: '{request}' });
  const dropped = m.createObservableCounter('efs.log.lines.dropped', { description: 'Log lines dropped because the log destination was behind', unit: '{line}' });
  const observe = (r: BatchObservableResult) => {
    r.observe(dropped, droppedLogLines());
    const stats = poolStats(db.knex);
    if (!stats) return;
    r.observe(connections, stats.used, used);
    r.observe(connections, stats.idle, idle);
    r.observe(pending, stats.pending);
  };
  const observables = [connections, pending, dropped];
  m.addBatchObservableCallback(observe, observables);
  return () => m.removeBatchObservableCallback(observe, observables);
}

/** GET /metrics on the health listener: the Prometheus text of every instrument (scrapeMetrics). */
export function serveMetrics(health: HttpServer, logger: Logger): void {
  let warned = false;
  const onErrors = (errors: unknown[]) => {
    // Once per process: a failing callback would otherwise log on every scrape.
    if (warned) return;
    warned = true;
    logger.warn({ err: errors[0], errors: errors.length }, 'metrics collection failed; the failing series are left out of scrapes');
  };
  health.get('/metrics', async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(await scrapeMetrics(onErrors)));
}
