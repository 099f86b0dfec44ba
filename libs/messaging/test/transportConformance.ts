import { afterEach, describe, expect, it } from 'vitest';
import { DeadLetterHeaders, Headers, ProgramsTopic, RequestTopics, type ProgramMessage, type ReplyMessage, type RequestMessage } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { waitFor } from '@efs/testing';
import { NonRetriableError, ServiceUnavailableError, type Transport } from '@efs/messaging';

/** A dead letter as both transports record it: the consumer group that gave up and why. */
export interface ObservedDeadLetter {
  group: string;
  reason: string;
  messageId: string;
}

/** Reads a dead letter from the headers both transports write on it. */
export const fromDeadLetterHeaders = (h: Record<string, string>): ObservedDeadLetter => ({
  group: h[DeadLetterHeaders.group] ?? '',
  reason: h[DeadLetterHeaders.reason] ?? '',
  messageId: h[Headers.messageId] ?? '',
});

/** One set of started transports under test, isolated from every other set (own topics or own process). */
export interface TransportUnderTest {
  /** Serves requests and consumes events. */
  server: Transport;
  /** Sends requests and publishes; may be the same object as `server`. */
  caller: Transport;
  /** Every dead letter written so far. */
  deadLetters(): Promise<ObservedDeadLetter[]>;
  /**
   * A publisher whose acknowledgements cannot come until `release` (in-process: a consumer of
   * ProgramsTopic that does not finish; Kafka: a broker that accepts connections and never answers).
   */
  unacknowledged(): Promise<{ publisher: Transport; release(): Promise<void> }>;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** Longest a single wait for delivery may take on this transport. */
  waitMs: number;
  /** Deadline of a request that nobody answers in time (a broker needs more than memory). */
  deadlineMs: number;
}

export const program = (id: string, name = 'P'): ProgramMessage => ({
  id,
  utility_id: 'u1',
  name,
  description: 'd',
  eligible_device_types: ['BATTERY'],
  zip_codes: ['88800'],
  can_auto_enroll: false,
  minimum_reserve_percentage: 20,
  minimum_commitment_months: null,
  participation_months: [1, 2],
  rates: { upfront_per_kwh: 1, upfront_per_device: 2, yearly_per_kw: 3, yearly_per_device: 4 },
  enrollment_form: [{ name: 'a', label: 'A', type: 'string', hint: 'h' }],
  terms_and_conditions_version: null,
  terms_and_conditions_text: null,
  auto_approve_after_ms: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

export const request = (op: string): RequestMessage => ({
  op,
  principal: { kind: 'CLIENT', integrator_id: 'i1', utility_id: null, site_id: null, token_id: null },
  params: { siteId: 's1' },
  query: { zip_code: ['88800'] },
  body: JSON.stringify({ a: 1 }),
});

/**
 * The behaviour every transport must share, so the embedded default (in-process) is proven to
 * behave like production (Kafka): one suite, run by one test file per transport with its factory.
 * Subscriptions read from the beginning because each set of transports starts on empty topics.
 */
export function transportConformance(name: string, create: () => Promise<TransportUnderTest>, opts: ConformanceOptions): void {
  // A test waits at most twice (a request, then a delivery), so its timeout follows the transport's wait.
  describe(`transport conformance: ${name}`, { timeout: 2 * opts.waitMs + 10_000 }, () => {
    let open: TransportUnderTest | undefined;
    const start = async () => (open = await create());
    afterEach(async () => {
      await open?.close();
      open = undefined;
    });
    const until = (ok: () => boolean, what: string) => waitFor(ok, { timeoutMs: opts.waitMs, what });
    const deadLettersUntil = async (count: number) => {
      let seen: ObservedDeadLetter[] = [];
      await waitFor(async () => (seen = await open!.deadLetters()).length >= count, { timeoutMs: opts.waitMs, what: `${count} dead letters` });
      return seen;
    };

    // serve() resolves once the server reads the request partitions from where they end: the
    // first request sent after it is answered, without asking again.
    const firstAnswer = (caller: Transport, req: RequestMessage) => caller.request('catalog', req, { timeoutMs: Math.max(opts.deadlineMs, opts.waitMs / 2) });

    it('answers a request with the reply of the serving handler, the request intact', async () => {
      const { server, caller } = await start();
      await server.serve('catalog', async (req) => ({ status: 200, body: JSON.stringify({ echo: req }) }));
      const reply = await firstAnswer(caller, request('programs.list'));
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body!).echo).toEqual(request('programs.list'));
    });

    it('fails with ServiceUnavailableError at the deadline when the handler does not answer in time', async () => {
      const { server, caller } = await start();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await server.serve('catalog', async (req) => {
        if (req.op === 'slow') await gate;
        return { status: 200, body: '{}' };
      });
      // The route works (a quick answer arrives), so only the handler's slowness fails the next call.
      expect((await firstAnswer(caller, request('quick'))).status).toBe(200);
      await expect(caller.request('catalog', request('slow'), { timeoutMs: opts.deadlineMs })).rejects.toBeInstanceOf(ServiceUnavailableError);
      release();
    });

    it('does not run the handler of a request that reaches its service past its deadline, and says nothing was done', async () => {
      const { server, caller } = await start();
      const handled: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await server.serve('catalog', async (req) => {
        if (req.op === 'block') await gate;
        handled.push(req.op);
        return { status: 200, body: '{}' };
      });
      expect((await firstAnswer(caller, request('quick'))).status).toBe(200);
      // 'late' waits behind 'block', which has its key, until its deadline has passed. The caller
      // keeps waiting past the deadline (graceMs), so the service's refusal reaches it.
      const blocked = caller.request('catalog', request('block'), { timeoutMs: 4 * opts.waitMs, key: 'k' });
      const sentAt = Date.now();
      const late = caller.request('catalog', request('late'), { timeoutMs: opts.deadlineMs, graceMs: opts.waitMs, key: 'k' });
      await waitFor(() => Date.now() > sentAt + opts.deadlineMs + 100, { what: 'the deadline to pass' });
      release();
      const reply = await late;
      expect(reply.status).toBe(503);
      expect(JSON.parse(reply.body!)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status_code: 503 });
      await blocked;
      expect(handled).not.toContain('late');
    });

    it('handles requests of different keys at the same time, and those of one key one after the other', async () => {
      const { server, caller } = await start();
      // More keys than a request topic has partitions: some share one, and still none waits for another.
      const keys = Array.from({ length: 2 * RequestTopics.catalog.partitions }, (_, i) => `site-${i}`);
      const events: string[] = [];
      const started = (step: string) => events.includes(`start ${step}`);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await server.serve('catalog', async (req, meta) => {
        const step = `${meta.key}/${req.op}`;
        events.push(`start ${step}`);
        if (req.op === 'first') await gate;
        events.push(`end ${step}`);
        return { status: 200, body: JSON.stringify({ step }) };
      });
      expect((await firstAnswer(caller, request('quick'))).status).toBe(200);
      const answers: Promise<ReplyMessage>[] = [];
      for (const key of keys) for (const op of ['first', 'second']) answers.push(caller.request('catalog', request(op), { timeoutMs: 4 * opts.waitMs, key }));
      // Every key's first request runs while all of them are held: different keys do not wait for each other.
      await until(() => keys.every((k) => started(`${k}/first`)), "every key's first request started");
      // A key's second request waits for its first, however long it takes.
      expect(keys.filter((k) => started(`${k}/second`))).toEqual([]);
      release();
      const replies = await Promise.all(answers);
      expect(replies.map((r) => JSON.parse(r.body!).step)).toEqual(keys.flatMap((k) => [`${k}/first`, `${k}/second`]));
      for (const k of keys) expect(events.indexOf(`start ${k}/second`)).toBeGreaterThan(events.indexOf(`end ${k}/first`));
    });

    it('reads what is sent right after serve() and subscribe() resolve, from their first call on', async () => {
      const { server, caller } = await start();
      await server.serve('catalog', async (req) => ({ status: 200, body: JSON.stringify({ op: req.op }) }));
      const reply = await caller.request('catalog', request('right-after-serve'), { timeoutMs: opts.waitMs / 2 });
      expect(JSON.parse(reply.body!)).toEqual({ op: 'right-after-serve' });
      // Not from the beginning: only what is published after subscribe() resolved, and that for
      // sure (several fresh groups: a consumer that looks up where to start only after joining
      // misses some of them).
      const seen = new Map<string, string[]>();
      for (let i = 0; i < 8; i++) {
        const group = `latest-only-${i}`;
        seen.set(group, []);
        await server.subscribe(ProgramsTopic, group, async (m) => void seen.get(group)!.push(m.meta.id));
        await caller.publish(ProgramsTopic, `p${i}`, program(`p${i}`), { messageId: `right-after-subscribe-${i}` });
      }
      await until(() => [...seen.values()].every((ids, i) => ids.includes(`right-after-subscribe-${i}`)), 'each message published right after its subscribe()');
      // Each group reads from where the topic ended when it subscribed: its own message and the later
      // ones. The keys differ, so they land on different partitions, whose order is not promised.
      for (const [i, ids] of [...seen.values()].entries()) expect([...ids].sort()).toEqual(Array.from({ length: 8 - i }, (_, k) => `right-after-subscribe-${i + k}`));
    });

    it('fails with ServiceUnavailableError at the deadline when no service serves the target', async () => {
      const { caller } = await start();
      await expect(caller.request('telemetry', request('nobody'), { timeoutMs: opts.deadlineMs })).rejects.toBeInstanceOf(ServiceUnavailableError);
    });

    it('tells an inMemory subscription caught up once it has handled what the topic held, from before it subscribed on, and not while it lags', async () => {
      const { server, caller } = await start();
      await caller.publish(ProgramsTopic, 'p0', program('p0'));
      const began: string[] = [];
      const seen: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await server.subscribe(ProgramsTopic, 'model', async (m) => {
        began.push(m.value.id);
        if (m.value.name === 'held') await gate;
        seen.push(m.value.id);
      }, { inMemory: true });
      expect(await server.caughtUp(ProgramsTopic, 'model', { timeoutMs: opts.waitMs })).toBe(true);
      expect(seen).toEqual(['p0']);
      // A message the model is still handling: not caught up until it has been handled.
      const held = caller.publish(ProgramsTopic, 'p1', program('p1', 'held'));
      await until(() => began.includes('p1'), 'the held message reaching the model');
      expect(await server.caughtUp(ProgramsTopic, 'model', { timeoutMs: 200 })).toBe(false);
      const after = server.caughtUp(ProgramsTopic, 'model', { timeoutMs: opts.waitMs });
      release();
      expect(await after).toBe(true);
      expect(seen).toEqual(['p0', 'p1']);
      await held;
    });

    it('never tells an inMemory subscription caught up once a message of its topic was dead-lettered, and refuses to tell others', async () => {
      const { server, caller } = await start();
      await server.subscribe(ProgramsTopic, 'model', async (m) => {
        if (m.value.name === 'bad') throw new NonRetriableError('cannot apply');
      }, { inMemory: true });
      await server.subscribe(ProgramsTopic, 'plain', async () => undefined);
      await caller.publish(ProgramsTopic, 'p1', program('p1', 'bad'));
      await deadLettersUntil(1);
      await caller.publish(ProgramsTopic, 'p2', program('p2'));
      expect(await server.caughtUp(ProgramsTopic, 'model', { timeoutMs: opts.waitMs })).toBe(false);
      await expect(server.caughtUp(ProgramsTopic, 'plain', { timeoutMs: opts.waitMs })).rejects.toThrow(/inMemory/);
    });

    it('redelivers after a retriable failure until the handler succeeds, without dead-lettering', async () => {
      const { server, caller } = await start();
      let calls = 0;
      let done = false;
      await server.subscribe(ProgramsTopic, 'flaky', async () => {
        if (++calls < 3) throw Errors.SERVICE_UNAVAILABLE();
        done = true;
      }, { fromBeginning: true, maxAttempts: 5 });
      await caller.publish(ProgramsTopic, 'p1', program('p1'));
      await until(() => done, 'the third attempt');
      expect(calls).toBe(3);
      // A marker dead-lettered after the flaky one shows the flaky message wrote no dead letter.
      await server.subscribe(ProgramsTopic, 'marker', async () => {
        throw new NonRetriableError('marker');
      }, { fromBeginning: true });
      const dead = await deadLettersUntil(1);
      expect(dead.map((d) => d.group)).toEqual(['marker']);
    });

    it('dead-letters a non-retriable failure straight away and a retriable one after maxAttempts, with the reason', async () => {
      const { server, caller } = await start();
      const calls = { bad: 0, failing: 0 };
      const healthy: string[] = [];
      await server.subscribe(ProgramsTopic, 'bad-data', async () => {
        calls.bad++;
        throw new NonRetriableError('invariant');
      }, { fromBeginning: true });
      await server.subscribe(ProgramsTopic, 'always-fails', async () => {
        calls.failing++;
        throw new Error('boom');
      }, { fromBeginning: true, maxAttempts: 3 });
      await server.subscribe(ProgramsTopic, 'healthy', async (m) => void healthy.push(m.meta.id), { fromBeginning: true });
      await caller.publish(ProgramsTopic, 'p1', program('p1'), { messageId: 'm-1' });
      const dead = await deadLettersUntil(2);
      expect(dead.map((d) => [d.group, d.reason, d.messageId]).sort()).toEqual([
        ['always-fails', 'Error: boom', 'm-1'],
        ['bad-data', 'NonRetriableError: invariant', 'm-1'],
      ]);
      expect(calls).toEqual({ bad: 1, failing: 3 });
      await until(() => healthy.length === 1, 'the healthy group');
      expect(healthy).toEqual(['m-1']);
    });

    it('fails publishBatch with ServiceUnavailableError by its deadline when the acknowledgement cannot come, and publishes once it can', async () => {
      const { server, caller } = await start();
      const handled: string[] = [];
      await server.subscribeBatch(ProgramsTopic, 'batch', async (batch) => void handled.push(...batch.map((m) => m.value.id)), { fromBeginning: true });
      const { publisher, release } = await open!.unacknowledged();
      const started = Date.now();
      await expect(publisher.publishBatch(ProgramsTopic, [{ key: 'held', value: program('held') }], { timeoutMs: opts.deadlineMs })).rejects.toBeInstanceOf(ServiceUnavailableError);
      // The deadline answers, not the retries of a broker that is gone (scheduling slack allowed, never a hang).
      expect(Date.now() - started).toBeLessThan(opts.deadlineMs + 3000);
      await release();
      await caller.publishBatch(ProgramsTopic, [{ key: 'b1', value: program('b1') }, { key: 'b2', value: program('b2') }], { timeoutMs: opts.waitMs });
      await until(() => handled.includes('b1') && handled.includes('b2'), 'the batch published after the release');
    });

    it('puts a batch message on the partition its key hashes to, as partitioner() tells, or on the partition it names', async () => {
      const { server, caller } = await start();
      const placed = new Map<string, number>();
      await server.subscribeBatch(ProgramsTopic, 'placed', async (batch) => void batch.forEach((m) => placed.set(m.value.id, m.meta.partition)), { fromBeginning: true });
      const partitionOf = await caller.partitioner(ProgramsTopic, { timeoutMs: opts.waitMs });
      const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
      await caller.publishBatch(
        ProgramsTopic,
        [...keys.map((k) => ({ key: k, value: program(k) })), ...keys.map((k) => ({ key: 'one-key-for-all', partition: partitionOf(k), value: program(`named-${k}`) }))],
        { timeoutMs: opts.waitMs },
      );
      await until(() => placed.size === 2 * keys.length, 'every message');
      for (const k of keys) {
        expect(placed.get(k)).toBe(partitionOf(k));
        expect(placed.get(`named-${k}`)).toBe(partitionOf(k));
      }
    });

    it('keeps the order of each key', async () => {
      const { server, caller } = await start();
      const seen: string[] = [];
      await server.subscribe(ProgramsTopic, 'ordered', async (m) => void seen.push(`${m.meta.key}:${m.value.name}`), { fromBeginning: true });
      const sent: string[] = [];
      for (let i = 0; i < 10; i++) for (const key of ['a', 'b', 'c']) sent.push(`${key}:${i}`);
      for (const s of sent) {
        const [key, n] = s.split(':') as [string, string];
        await caller.publish(ProgramsTopic, key, program(key, n));
      }
      await until(() => seen.length === sent.length, 'every message');
      for (const key of ['a', 'b', 'c']) expect(seen.filter((s) => s.startsWith(`${key}:`))).toEqual(sent.filter((s) => s.startsWith(`${key}:`)));
    });
  });
}
