import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { allTopics, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { KafkaTransport, REQUEST_COMMIT_INTERVAL_MS } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl, tierAvailable } from '@efs/testing';

// How the request path uses the broker: requests a service handles and the offsets it commits.
const run = await tierAvailable('kafka');
const logger = createLogger({ name: 'test', level: 'silent' });

const request = (n: number): RequestMessage => ({
  op: 'count',
  principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null },
  params: { n: String(n) },
  query: {},
  body: null,
});

describe.runIf(run)('Kafka transport: offsets of request and reply consumers', { timeout: 120_000 }, () => {
  let prefix = '';
  const started: KafkaTransport[] = [];
  const make = async (replyInstanceId?: string) => {
    const t = new KafkaTransport({ brokers: testKafkaBrokers().split(','), clientId: 'commits', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix, ...(replyInstanceId ? { replyInstanceId } : {}) });
    await t.start();
    started.push(t);
    return t;
  };
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

  afterEach(async () => {
    await Promise.allSettled(started.splice(0).map((t) => t.stop()));
    await deleteTopicsWithPrefix(prefix);
  });

  it('commits request and reply offsets at an interval, not after every answer', async () => {
    prefix = `o${randomBytes(4).toString('hex')}.`;
    const handled: string[] = [];
    const server = await serving(handled);
    const caller = await make('caller');
    const before = (server.brokerRequests().OffsetCommit ?? 0) + (caller.brokerRequests().OffsetCommit ?? 0);
    for (let n = 0; n < 100; n++) await ask(caller, n);
    const commits = (server.brokerRequests().OffsetCommit ?? 0) + (caller.brokerRequests().OffsetCommit ?? 0) - before;
    // kafkajs commits after every batch: one a request and one a reply here, 200 in all. At one
    // commit a second per consumer this takes over 25 s of requests to reach 50.
    expect(handled).toHaveLength(100);
    expect(commits).toBeLessThan(50);
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
