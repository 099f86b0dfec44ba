import { describe, expect, it } from 'vitest';
import { ProgramsTopic, type ReplyMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { createLogger } from '@efs/logging';
import { InProcessTransport, NonRetriableError, errorReply } from '@efs/messaging';
import { initMetrics, scrapeMetrics } from '@efs/telemetry';
import { matching, parseScrape, total } from '@efs/testing';
import { MAX_OPERATIONS, outcomeOfFailure, outcomeOfReply, RequestMetrics } from '../src/requestMetrics.ts';
import { ServiceUnavailableError } from '../src/transport.ts';
import { program, request } from './transportConformance.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
// This file's worker has its own meter provider: instruments made after this count.
initMetrics({ service: 'messaging-test' });
const scrape = async () => parseScrape(await scrapeMetrics());

describe('request outcomes', () => {
  it('are ok, client_error or server_error by the reply status, timeout for no answer, error otherwise', () => {
    expect([200, 204, 304, 400, 404, 409, 500, 503].map((status) => outcomeOfReply({ status, body: null }))).toEqual(['ok', 'ok', 'ok', 'client_error', 'client_error', 'client_error', 'server_error', 'server_error']);
    expect(outcomeOfFailure(new ServiceUnavailableError('late'))).toBe('timeout');
    expect(outcomeOfFailure(new Error('invalid request'))).toBe('error');
  });
});

describe('messaging metrics of the in-process transport', () => {
  it('times each request by operation and outcome at the caller', async () => {
    const t = new InProcessTransport({ logger });
    await t.serve('catalog', async (req): Promise<ReplyMessage> => {
      if (req.op === 'metrics.ok') return { status: 200, body: '{}' };
      if (req.op === 'metrics.refused') return errorReply(Errors.NOT_FOUND('no such thing'));
      throw new Error('broken');
    });
    const before = await scrape();
    const count = (samples: typeof before, operation: string, outcome: string) => total(samples, 'efs_messaging_request_duration_seconds_count', { operation, outcome });
    for (let i = 0; i < 3; i++) await t.request('catalog', request('metrics.ok'), { timeoutMs: 1000 });
    await t.request('catalog', request('metrics.refused'), { timeoutMs: 1000 });
    await t.request('catalog', request('metrics.broken'), { timeoutMs: 1000 });
    // Nobody serves enrollment: the caller waits out its deadline.
    await expect(t.request('enrollment', request('metrics.unanswered'), { timeoutMs: 30 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    const after = await scrape();
    expect(count(after, 'catalog.metrics.ok', 'ok') - count(before, 'catalog.metrics.ok', 'ok')).toBe(3);
    expect(count(after, 'catalog.metrics.refused', 'client_error') - count(before, 'catalog.metrics.refused', 'client_error')).toBe(1);
    expect(count(after, 'catalog.metrics.broken', 'server_error') - count(before, 'catalog.metrics.broken', 'server_error')).toBe(1);
    expect(count(after, 'enrollment.metrics.unanswered', 'timeout') - count(before, 'enrollment.metrics.unanswered', 'timeout')).toBe(1);
    expect(total(after, 'efs_messaging_request_duration_seconds_sum', { operation: 'enrollment.metrics.unanswered', outcome: 'timeout' })).toBeGreaterThanOrEqual(0.03);
    expect(matching(after, 'efs_messaging_request_duration_seconds_bucket', { operation: 'catalog.metrics.ok', outcome: 'ok', le: '+Inf' })).toHaveLength(1);
    // The serving side counted what it answered under the request consumer's group.
    expect(total(after, 'efs_messaging_records_handled_total', { consumer_group: 'efs-catalog-requests', topic: 'efs.catalog.requests' })).toBeGreaterThanOrEqual(5);
    await t.stop();
  });

  it('counts a request that reached its service past its deadline as expired, and its caller sees server_error', async () => {
    const t = new InProcessTransport({ logger });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await t.serve('catalog', async (req) => {
      if (req.op === 'metrics.hold') await held;
      return { status: 200, body: '{}' };
    });
    const before = total(await scrape(), 'efs_messaging_requests_expired_total', { operation: 'catalog.metrics.late' });
    // Same key: the second waits behind the first, past its deadline, within its grace.
    const first = t.request('catalog', request('metrics.hold'), { timeoutMs: 5000, key: 'k' });
    const second = t.request('catalog', request('metrics.late'), { timeoutMs: 20, graceMs: 5000, key: 'k' });
    await new Promise((r) => setTimeout(r, 50));
    release();
    await first;
    expect((await second).status).toBe(503);
    const after = await scrape();
    expect(total(after, 'efs_messaging_requests_expired_total', { operation: 'catalog.metrics.late' }) - before).toBe(1);
    expect(total(after, 'efs_messaging_request_duration_seconds_count', { operation: 'catalog.metrics.late', outcome: 'server_error' })).toBe(1);
    await t.stop();
  });

  it('counts records handled, handler errors and dead letters by consumer group and topic', async () => {
    const t = new InProcessTransport({ logger, retryBaseDelayMs: 1 });
    let failures = 2;
    await t.subscribe(ProgramsTopic, 'metrics-group', async (m) => {
      if (m.value.name === 'poison') throw new NonRetriableError('never');
      if (m.value.name === 'flaky' && failures-- > 0) throw new Error('once more');
    });
    const labels = { consumer_group: 'metrics-group', topic: ProgramsTopic.name };
    await t.publish(ProgramsTopic, 'a', program('a'));
    await t.publish(ProgramsTopic, 'b', program('b', 'flaky'));
    await t.publish(ProgramsTopic, 'c', program('c', 'poison'));
    await t.idle();
    const samples = await scrape();
    expect(total(samples, 'efs_messaging_records_handled_total', labels)).toBe(2);
    // Two failed attempts of the flaky record, one of the poison one.
    expect(total(samples, 'efs_messaging_handler_errors_total', labels)).toBe(3);
    expect(total(samples, 'efs_messaging_records_dead_lettered_total', labels)).toBe(1);
    await t.stop();
  });
});

describe('RequestMetrics', () => {
  it(`labels at most ${MAX_OPERATIONS} operations by service and name, and the rest <service>._OTHER`, async () => {
    const metrics = new RequestMetrics();
    for (let i = 0; i < MAX_OPERATIONS + 5; i++) await metrics.timed('webhooks', `bounded.${i}`, performance.now(), Promise.resolve({ status: 200, body: null }));
    const samples = matching(await scrape(), 'efs_messaging_request_duration_seconds_count');
    expect(samples.filter((s) => s.labels.operation!.startsWith('webhooks.bounded.'))).toHaveLength(MAX_OPERATIONS);
    expect(total(samples, 'efs_messaging_request_duration_seconds_count', { operation: 'webhooks._OTHER' })).toBe(5);
  });
});
