import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { allTopics, ProgramsTopic, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { EVENT_COMMIT_INTERVAL_MS, KafkaTransport, REQUEST_COMMIT_INTERVAL_MS, type SubscribeOptions } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl, tierAvailable, waitFor } from '@efs/testing';
import { program } from './transportConformance.ts';

// How the transport uses the broker: messages its consumers handle and the offsets they commit.
const run = await tierAvailable('kafka');
const logger = createLogger({ name: 'test', level: 'silent' });

let prefix = '';
const started: KafkaTransport[] = [];
const make = async (replyInstanceId?: string) => {
  const t = new KafkaTransport({ brokers: testKafkaBrokers().split(','), clientId: 'commits', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix, ...(replyInstanceId ? { replyInstanceId } : {}) });
  await t.start();
  started.push(t);
  return t;
};
const commitsOf = (t: KafkaTransport) => t.brokerRequests().OffsetCommit ?? 0;

afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((t) => t.stop()));
  await deleteTopicsWithPrefix(prefix);
});

/**
 * The most commits one consumer may make since `since` at one an interval: one for each interval
 * begun, and the first. Bound by the time the test really took, not by a guess of it.
 */
const atMostOneAnInterval = (since: number, intervalMs: number) => Math.ceil((Date.now() - since) / intervalMs) + 1;

const request = (n: number): RequestMessage => ({
  op: 'count',
  principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null },
  params: { n: String(n) },
  query: {},
  body: null,
});

describe.runIf(run)('Kafka transport: offsets of request and reply consumers', { timeout: 120_000 }, () => {
  /** A server whose handler records which requests it handled (by their `n`). */
  const serving = async (handled: string[]) => {
    const server = await make();
    await server.serve('catalog', async (req) => {
      handled.push(req.params.n!);
      return { status: 200, body: '{}' };
    });
    return server;
  };
  // Long deadlines: a request read again would still be handled, not dropped as late.
  const ask = (caller: KafkaTransport, n: number, key = `k${n}`) => caller.request('catalog', request(n), { timeoutMs: 60_000, key });
  /** Past the commit interval: the next batch a consumer handles commits everything it resolved. */
  const pastCommitInterval = () => new Promise((r) => setTimeout(r, REQUEST_COMMIT_INTERVAL_MS + 200));

  it('commits request and reply offsets at an interval, not after every answer', async () => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const handled: string[] = [];
    const server = await serving(handled);
    const caller = await make('caller');
    const before = [commitsOf(server), commitsOf(caller)];
    const since = Date.now();
    for (let n = 0; n < 100; n++) await ask(caller, n);
    const commits = [commitsOf(server) - before[0]!, commitsOf(caller) - before[1]!];
    // kafkajs commits after every batch: 100 requests and 100 replies here. Here each of the two
    // consumers (the server's requests, the caller's replies) commits at most once an interval,
    // however long a slow machine takes.
    expect(handled).toHaveLength(100);
    const bound = atMostOneAnInterval(since, REQUEST_COMMIT_INTERVAL_MS);
    for (const c of commits) {
      expect(c).toBeLessThanOrEqual(bound);
      expect(c).toBeLessThan(100);
    }
  });

  it('commits what a server handled when it stops: the next server of its group does not handle it again', async () => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const first: string[] = [];
    const server = await serving(first);
    const caller = await make('caller');
    // One key, one partition. A commit after the second request, then eight left to commit at the stop.
    await ask(caller, 0, 'k');
    await pastCommitInterval();
    for (let n = 1; n < 10; n++) await ask(caller, n, 'k');
    await server.stop();
    const second: string[] = [];
    await serving(second);
    await ask(caller, 10, 'k');
    expect(first).toHaveLength(10);
    expect(second).toEqual(['10']);
  });

  it('commits what a server handled before its group rebalances under load: each request is handled once by the two servers', async () => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const handled: string[] = [];
    await serving(handled);
    const caller = await make('caller');
    // Keys over every partition of the request topic, committed.
    for (let n = 0; n < 24; n++) await ask(caller, n);
    await pastCommitInterval();
    // Requests keep coming while a second server joins: the first learns of the rebalance at its
    // next heartbeat with what it resolved since its last commit, gives up half of the partitions,
    // and the second reads them from the offsets committed.
    let sent = 24;
    let joining = true;
    const traffic = (async () => {
      while (joining) await ask(caller, sent++);
    })();
    await serving(handled);
    joining = false;
    await traffic;
    for (let n = 0; n < 24; n++) await ask(caller, sent++);
    expect([...handled].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: sent }, (_, n) => String(n)));
  });
});

describe.runIf(run)('Kafka transport: offsets of event consumers', { timeout: 120_000 }, () => {
  type Kind = 'subscribe' | 'subscribeBatch';
  /** Records the ids of the programs a consumer of `group` handles. */
  const consume = async (t: KafkaTransport, kind: Kind, group: string, handled: string[], options: SubscribeOptions) => {
    if (kind === 'subscribe') await t.subscribe(ProgramsTopic, group, async (m) => void handled.push(m.value.id), options);
    else await t.subscribeBatch(ProgramsTopic, group, async (batch) => void handled.push(...batch.map((m) => m.value.id)), options);
  };
  const pastCommitInterval = () => new Promise((r) => setTimeout(r, EVENT_COMMIT_INTERVAL_MS + 200));

  it.each<Kind>(['subscribe', 'subscribeBatch'])('%s: an idempotent consumer commits at an interval, any other after every batch', async (kind) => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const publisher = await make();
    const [idempotent, plain] = [await make(), await make()];
    const byIdempotent: string[] = [];
    const byPlain: string[] = [];
    await consume(idempotent, kind, 'model', byIdempotent, { idempotent: true });
    await consume(plain, kind, 'plain', byPlain, {});
    const before = [commitsOf(idempotent), commitsOf(plain)];
    const since = Date.now();
    // One message a batch: each is handled before the next is published.
    for (let n = 0; n < 40; n++) {
      await publisher.publish(ProgramsTopic, `p${n}`, program(`p${n}`));
      await waitFor(() => byIdempotent.length > n && byPlain.length > n, { what: `p${n} handled by both` });
    }
    expect(byIdempotent).toHaveLength(40);
    // The plain consumer commits each batch after its handler returns: the last commit's answer can
    // still be on its way when the 40th message has been handled.
    await waitFor(() => commitsOf(plain) - before[1]! >= 40, { what: 'a commit of each of the plain consumer\'s 40 batches' });
    // A commit an interval at most (40 batches take a few seconds, longer on a slow machine), where
    // the plain consumer committed every batch.
    const during = commitsOf(idempotent) - before[0]!;
    expect(during).toBeLessThanOrEqual(atMostOneAnInterval(since, EVENT_COMMIT_INTERVAL_MS));
    expect(during).toBeLessThan(40);
    // And it does commit while running, not only at its stop: a batch past the interval commits.
    await pastCommitInterval();
    await publisher.publish(ProgramsTopic, 'p40', program('p40'));
    await waitFor(() => commitsOf(idempotent) - before[0]! > during, { what: 'a commit of the running idempotent consumer' });
  });

  it.each<Kind>(['subscribe', 'subscribeBatch'])('%s: an idempotent consumer commits what it handled when it stops: the next member of its group does not handle it again', async (kind) => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const publisher = await make();
    const options = { idempotent: true, fromBeginning: true };
    const first: string[] = [];
    const consumer = await make();
    await consume(consumer, kind, 'model', first, options);
    // One key, one partition. A commit with the second message, then eight left to commit at the stop.
    await publisher.publish(ProgramsTopic, 'k', program('p0'));
    await waitFor(() => first.length === 1, { what: 'p0 handled' });
    await pastCommitInterval();
    for (let n = 1; n < 10; n++) {
      await publisher.publish(ProgramsTopic, 'k', program(`p${n}`));
      await waitFor(() => first.length === n + 1, { what: `p${n} handled` });
    }
    await consumer.stop();
    const second: string[] = [];
    await consume(await make(), kind, 'model', second, options);
    await publisher.publish(ProgramsTopic, 'k', program('p10'));
    await waitFor(() => second.length > 0, { what: 'p10 handled' });
    expect(first).toEqual(Array.from({ length: 10 }, (_, n) => `p${n}`));
    expect(second).toEqual(['p10']);
  });

  it('an idempotent consumer commits what it handled before its group rebalances: each message is handled once by the two members', async () => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const publisher = await make();
    const handled: string[] = [];
    const options = { idempotent: true, fromBeginning: true };
    await consume(await make(), 'subscribeBatch', 'model', handled, options);
    // Keys over every partition of the topic, committed.
    let sent = 0;
    const publishOne = async () => {
      const n = sent++;
      await publisher.publish(ProgramsTopic, `k${n}`, program(`p${n}`));
      await waitFor(() => handled.includes(`p${n}`), { what: `p${n} handled`, timeoutMs: 30_000 });
    };
    while (sent < 12) await publishOne();
    await pastCommitInterval();
    // Messages keep coming while a second member joins: the first learns of the rebalance with what
    // it handled since its last commit, gives up some partitions, and the second reads them from
    // the offsets committed.
    let joining = true;
    const traffic = (async () => {
      while (joining) await publishOne();
    })();
    await consume(await make(), 'subscribeBatch', 'model', handled, options);
    joining = false;
    await traffic;
    for (let n = 0; n < 12; n++) await publishOne();
    expect([...handled].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))).toEqual(Array.from({ length: sent }, (_, n) => `p${n}`));
  });
});
