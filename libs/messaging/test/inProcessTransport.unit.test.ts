import { describe, expect, it } from 'vitest';
import { ProgramsTopic, ReplyTopic, RequestTopics, type ProgramMessage, type ReplyMessage, type RequestMessage, type Topic } from '@efs/contracts';
import { z } from 'zod';
import { Errors } from '@efs/errors';
import { createLogger } from '@efs/logging';
import { AvroCodec, InProcessTransport, NonRetriableError, ServiceUnavailableError, type Delivered } from '@efs/messaging';
import { program, request } from './transportConformance.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const newTransport = () => new InProcessTransport({ logger, retryBaseDelayMs: 1 });

async function waitUntil(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok()).toBe(true);
}

describe('in-process transport', () => {
  it('answers a request with the reply of the serving handler', async () => {
    const t = newTransport();
    await t.serve('catalog', async (req) => ({ status: 200, body: JSON.stringify({ echo: req }) }));
    const reply = await t.request('catalog', request('programs.list'), { timeoutMs: 1000 });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body!).echo).toEqual(request('programs.list'));
  });

  it('fails with ServiceUnavailableError at the deadline when nobody answers, and drops the late reply', async () => {
    const t = newTransport();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await t.serve('catalog', async () => {
      await gate;
      return { status: 200, body: '{}' };
    });
    const started = Date.now();
    await expect(t.request('catalog', request('slow'), { timeoutMs: 100 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(Date.now() - started).toBeLessThan(1000);
    release();
    await t.idle();
  });

  it('hands over requests and replies that read as after an Avro round trip, and refuses any other', async () => {
    const t = newTransport();
    const seen: unknown[] = [];
    let answer: unknown = { status: 200, body: '[]' };
    await t.serve('catalog', async (req) => {
      seen.push(req);
      return answer as ReplyMessage;
    });
    const codec = new AvroCodec();
    const roundTrip = async (topic: Topic, v: unknown) => codec.decode(topic, await codec.encode(topic, v));
    const query = Object.assign(Object.create(null) as Record<string, string[]>, { zip_code: ['69001'], device_type: ['BATTERY', 'EV'] });
    const sent: RequestMessage = { ...request('programs.list'), query, body: JSON.stringify({ a: 'é\u2028' }) };
    const reply = await t.request('catalog', sent, { timeoutMs: 1000 });
    expect(seen).toEqual([await roundTrip(RequestTopics.catalog, sent)]);
    expect(reply).toEqual(await roundTrip(ReplyTopic, { status: 200, body: '[]' }));
    // What Avro would change is refused: a field the schema lacks, a field left to its default, a wrong type.
    for (const wrong of [{ ...sent, extra: 1 }, { ...sent, body: undefined }, { ...sent, principal: { kind: 'CLIENT' } }, { ...sent, params: { id: 1 } }]) {
      await expect(t.request('catalog', wrong as never, { timeoutMs: 1000 })).rejects.toThrow(/invalid efs.catalog.requests value/);
    }
    expect(seen).toHaveLength(1);
    // The refusal says where and what, never the value (a request carries credentials and bodies).
    const refusal = (v: unknown) => t.request('catalog', v as never, { timeoutMs: 1000 }).then(() => '', (e: Error) => e.message);
    const wrongType = await refusal({ ...sent, principal: { ...sent.principal, token_id: 7 }, body: 'password=hunter2' });
    expect(wrongType).toMatch(/principal\.token_id: a number where the schema wants/);
    const undeclared = await refusal({ ...sent, body: 'password=hunter2', extra: 'hunter2' });
    expect(undeclared).toMatch(/fields the schema lacks: extra/);
    expect(wrongType + undeclared).not.toContain('hunter2');
    // A field left out (that encode would give its default) is named by its path.
    expect(await refusal({ ...sent, body: undefined })).toMatch(/\(body: left out\)$/);
    expect(await refusal({ ...sent, principal: { ...sent.principal, site_id: undefined } })).toMatch(/\(principal\.site_id: left out\)$/);
    // A reply its schema refuses never reaches the caller, who is answered at its deadline.
    for (const wrong of [{ status: 200, body: '[]', extra: 1 }, { status: 200.5, body: '[]' }, { status: 200 }]) {
      answer = wrong;
      await expect(t.request('catalog', sent, { timeoutMs: 100 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    }
    await t.idle();
  });

  it('waits for the deadline when no service serves the target', async () => {
    const t = newTransport();
    await expect(t.request('enrollment', request('x'), { timeoutMs: 50 })).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('rejects a value that does not match the topic schema before anything is delivered', async () => {
    const t = newTransport();
    const seen: unknown[] = [];
    await t.subscribe(ProgramsTopic, 'g', async (m) => void seen.push(m));
    await expect(t.publish(ProgramsTopic, 'k', { ...program('p1'), minimum_reserve_percentage: 'high' } as never)).rejects.toThrow();
    await t.idle();
    expect(seen).toEqual([]);
  });

  it('delivers every message once to each consumer group, in publish order', async () => {
    const t = newTransport();
    const a: string[] = [];
    const b: string[] = [];
    await t.subscribe(ProgramsTopic, 'group-a', async (m) => void a.push(m.value.name));
    await t.subscribe(ProgramsTopic, 'group-b', async (m) => void b.push(m.value.name));
    for (const n of ['1', '2', '3']) await t.publish(ProgramsTopic, `p${n}`, program(`p${n}`, n));
    await t.idle();
    expect(a).toEqual(['1', '2', '3']);
    expect(b).toEqual(['1', '2', '3']);
  });

  it('replays a compacted topic from the beginning to a late subscriber, latest value per key', async () => {
    const t = newTransport();
    await t.publish(ProgramsTopic, 'p1', program('p1', 'old'));
    await t.publish(ProgramsTopic, 'p2', program('p2', 'other'));
    await t.publish(ProgramsTopic, 'p1', program('p1', 'new'));
    const seen: string[] = [];
    await t.subscribe(ProgramsTopic, 'late', async (m) => void seen.push(`${m.meta.key}=${m.value.name}`), { fromBeginning: true });
    await t.idle();
    expect(seen).toEqual(['p2=other', 'p1=new']);
  });

  it('retries a failing handler and then succeeds without dead-lettering', async () => {
    const t = newTransport();
    let calls = 0;
    await t.subscribe(ProgramsTopic, 'flaky', async () => {
      if (++calls < 3) throw new Error('transient');
    });
    await t.publish(ProgramsTopic, 'p1', program('p1'));
    await t.idle();
    expect(calls).toBe(3);
    expect(t.deadLetters).toEqual([]);
  });

  it('dead-letters a message after maxAttempts, and a NonRetriableError at once, with the reason', async () => {
    const t = newTransport();
    let calls = 0;
    await t.subscribe(ProgramsTopic, 'always-fails', async () => {
      calls++;
      throw new Error('boom');
    }, { maxAttempts: 3 });
    await t.subscribe(ProgramsTopic, 'bad-data', async () => {
      throw new NonRetriableError('invariant');
    });
    const seenAfter: Delivered<ProgramMessage>[] = [];
    await t.subscribe(ProgramsTopic, 'healthy', async (m) => void seenAfter.push(m));
    await t.publish(ProgramsTopic, 'p1', program('p1'), { messageId: 'm-1' });
    await t.idle();
    expect(calls).toBe(3);
    expect(t.deadLetters.map((d) => [d.group, d.topic, d.reason])).toEqual([
      ['bad-data', 'efs.catalog.programs.dlt', 'NonRetriableError: invariant'],
      ['always-fails', 'efs.catalog.programs.dlt', 'Error: boom'],
    ]);
    expect(seenAfter.map((m) => m.meta.id)).toEqual(['m-1']);
  });

  it('retries a handler whose dependency is unavailable for as long as it is, without counting it against maxAttempts', async () => {
    const t = newTransport();
    let calls = 0;
    await t.subscribe(ProgramsTopic, 'database-restarting', async () => {
      if (++calls < 6) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }, { maxAttempts: 2 });
    await t.publish(ProgramsTopic, 'p1', program('p1'));
    await t.idle();
    expect(calls).toBe(6);
    expect(t.deadLetters).toEqual([]);
  });

  it('dead-letters a 4xx catalogue error and a ZodError after one attempt; retries a retriable catalogue error', async () => {
    const t = newTransport();
    const calls = { notFound: 0, zod: 0, unavailable: 0 };
    await t.subscribe(ProgramsTopic, 'not-found', async () => {
      calls.notFound++;
      throw Errors.NOT_FOUND('Site s1 not found');
    });
    await t.subscribe(ProgramsTopic, 'bad-shape', async () => {
      calls.zod++;
      z.object({ missing: z.string() }).parse({});
    });
    await t.subscribe(ProgramsTopic, 'unavailable', async () => {
      if (++calls.unavailable < 3) throw Errors.SERVICE_UNAVAILABLE();
    });
    await t.publish(ProgramsTopic, 'p1', program('p1'));
    await t.idle();
    expect(calls).toEqual({ notFound: 1, zod: 1, unavailable: 3 });
    expect(t.deadLetters.map((d) => [d.group, d.reason.split(':')[0]])).toEqual([
      ['not-found', 'AppError NOT_FOUND'],
      ['bad-shape', 'ZodError'],
    ]);
    expect(t.deadLetters[0]!.headers['efs-dlt-reason']).toBe('AppError NOT_FOUND: Site s1 not found');
  });

  it('delivers what was published before stop() to every consumer group, then stops', async () => {
    const t = newTransport();
    const handled: string[] = [];
    await t.subscribe(ProgramsTopic, 'slow', async (m) => {
      await new Promise((r) => setTimeout(r, 5));
      handled.push(m.value.name);
    });
    const names = Array.from({ length: 20 }, (_, i) => String(i));
    for (const n of names) await t.publish(ProgramsTopic, `p${n}`, program(`p${n}`, n));
    await t.stop();
    expect(handled).toEqual(names);
    expect(await t.isReady()).toBe(false);
  });

  it('gives up on undelivered messages after stopDrainMs instead of hanging', async () => {
    const t = new InProcessTransport({ logger, retryBaseDelayMs: 1, stopDrainMs: 50 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handled: string[] = [];
    await t.subscribe(ProgramsTopic, 'stuck', async (m) => {
      if (m.value.name === 'first') await gate;
      handled.push(m.value.name);
    });
    // A publish resolves once its consumers handled the message: these two wait.
    const first = t.publish(ProgramsTopic, 'p1', program('p1', 'first')).then(() => 'handled', (e: Error) => e);
    const second = t.publish(ProgramsTopic, 'p2', program('p2', 'second')).then(() => 'handled', (e: Error) => e);
    await waitUntil(() => t['undelivered']() === 2);
    const started = Date.now();
    const stopping = t.stop();
    await new Promise((r) => setTimeout(r, 100));
    release();
    await stopping;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(handled).toEqual(['first']);
    // The publisher of the undelivered one is told (its outbox row stays for the next start).
    expect(await first).toBe('handled');
    expect(await second).toBeInstanceOf(ServiceUnavailableError);
  });

  it('resolves a publish only once every consumer group has handled the message (or dead-lettered it)', async () => {
    const t = newTransport();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await t.subscribe(ProgramsTopic, 'fast', async () => undefined);
    await t.subscribe(ProgramsTopic, 'slow', async () => gate);
    await t.subscribe(ProgramsTopic, 'broken', async () => {
      throw new NonRetriableError('bad');
    });
    let resolved = false;
    const published = t.publish(ProgramsTopic, 'p1', program('p1')).then(() => (resolved = true));
    await waitUntil(() => t.deadLetters.length === 1);
    expect(resolved).toBe(false);
    release();
    await published;
    expect(resolved).toBe(true);
    // Nobody subscribed: nothing to wait for.
    await t.publish(ProgramsTopic, 'p2', program('p2'));
  });

  it('with awaitOpen, holds publishes until open(), so consumers that subscribe meanwhile get them', async () => {
    const t = new InProcessTransport({ logger, retryBaseDelayMs: 1, awaitOpen: true });
    const seen: string[] = [];
    await t.subscribe(ProgramsTopic, 'early', async (m) => void seen.push(`early:${m.value.id}`));
    const published = t.publish(ProgramsTopic, 'p1', program('p1'));
    await t.subscribe(ProgramsTopic, 'late', async (m) => void seen.push(`late:${m.value.id}`));
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([]);
    t.open();
    await published;
    expect(seen.sort()).toEqual(['early:p1', 'late:p1']);
  });

  it('publishes a batch in order and hands it to a batch subscriber in batches of at most maxBatchSize', async () => {
    const t = newTransport();
    const batches: string[][] = [];
    await t.subscribeBatch(ProgramsTopic, 'bulk', async (ms) => void batches.push(ms.map((m) => m.value.name)), { maxBatchSize: 4 });
    const names = Array.from({ length: 10 }, (_, i) => String(i));
    await t.publishBatch(ProgramsTopic, names.map((n) => ({ key: `p${n}`, value: program(`p${n}`, n) })), { timeoutMs: 1000 });
    await t.idle();
    expect(batches.flat()).toEqual(names);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(4);
    expect(batches.length).toBeGreaterThanOrEqual(3);
  });

  it('retries a failing batch message by message: only the message that fails alone is dead-lettered', async () => {
    const t = newTransport();
    const stored: string[] = [];
    await t.subscribeBatch(
      ProgramsTopic,
      'bulk',
      async (ms) => {
        if (ms.some((m) => m.value.name === 'poison')) throw new Error('cannot store poison');
        stored.push(...ms.map((m) => m.value.name));
      },
      { maxBatchSize: 10, maxAttempts: 2 },
    );
    await t.publishBatch(ProgramsTopic, ['a', 'poison', 'b'].map((n) => ({ key: n, value: program(n, n) })), { timeoutMs: 1000 });
    await t.idle();
    expect(stored).toEqual(['a', 'b']);
    expect(t.deadLetters.map((d) => d.reason)).toEqual(['Error: cannot store poison']);
  });

  it('gives a batch subscriber that starts from the beginning what was published before', async () => {
    const t = newTransport();
    await t.publishBatch(ProgramsTopic, [{ key: 'x', value: program('x', 'early') }], { timeoutMs: 1000 });
    const got: string[] = [];
    await t.subscribeBatch(ProgramsTopic, 'late', async (ms) => void got.push(...ms.map((m) => m.value.name)), { fromBeginning: true });
    await t.idle();
    expect(got).toEqual(['early']);
  });
});
