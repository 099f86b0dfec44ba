import { describe, expect, it } from 'vitest';
import { ProgramsTopic, type ProgramMessage, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { InProcessTransport, NonRetriableError, ServiceUnavailableError, type Delivered } from '@efs/messaging';

const logger = createLogger({ name: 'test', level: 'silent' });
const newTransport = () => new InProcessTransport({ logger, retryBaseDelayMs: 1 });

const program = (id: string, name = 'P'): ProgramMessage => ({
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

const request = (op: string): RequestMessage => ({
  op,
  principal: { kind: 'CLIENT', integrator_id: 'i1', utility_id: null, site_id: null, token_id: null },
  params: { siteId: 's1' },
  query: { zip_code: ['88800'] },
  body: JSON.stringify({ a: 1 }),
});

describe('in-process transport', () => {
  it('answers a request with the reply of the serving handler, after an Avro round trip', async () => {
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
    // The outbox that published these has forgotten them: a message left in the queue is lost.
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
    await t.publish(ProgramsTopic, 'p1', program('p1', 'first'));
    await t.publish(ProgramsTopic, 'p2', program('p2', 'second'));
    const started = Date.now();
    const stopping = t.stop();
    await new Promise((r) => setTimeout(r, 100));
    release();
    await stopping;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(handled).toEqual(['first']);
  });
});
