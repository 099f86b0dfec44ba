import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgramsTopic, type ProgramMessage, type Topic, type TopicValue } from '@efs/contracts';
import { createMessagingTables, discardQuarantined, listQuarantined, migrateSchema, openDatabase, Outbox, retryQuarantined, type Database, type Publisher } from '@efs/db';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { createTestDatabase, tierAvailable, waitFor, type TestDatabase } from '@efs/testing';

const run = await tierAvailable('postgres');

const program = (id: string, name = id): ProgramMessage => ({
  id, utility_id: 'u', name, description: '', eligible_device_types: ['BATTERY'], zip_codes: [], can_auto_enroll: false,
  minimum_reserve_percentage: 0, minimum_commitment_months: null, participation_months: [], enrollment_form: [],
  rates: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 },
  terms_and_conditions_version: null, terms_and_conditions_text: null, auto_approve_after_ms: null,
  created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
});

/** A logger whose JSON lines are kept. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: () => { msg: string; level: string; [k: string]: unknown }[] } {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, cb) {
      raw.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { logger: createLogger({ name: 't', level: 'info', destination }), lines: () => raw.map((l) => JSON.parse(l)) };
}

/**
 * A publisher that records what it was handed and fails as told. Like Kafka (a key's messages go
 * to one partition, whose records are sent together), it refuses every message of a key handed
 * over while an earlier one of that key was refused.
 */
class ScriptedPublisher implements Publisher {
  readonly published: string[] = [];
  attempts = 0;
  refuse: (name: string) => boolean = () => false;
  private readonly refusedKeys = new Set<string>();
  async publish<T extends Topic>(_topic: T, key: string, value: TopicValue<T>): Promise<void> {
    this.attempts++;
    const name = (value as ProgramMessage).name;
    const refused = this.refuse(name) || this.refusedKeys.has(key);
    if (refused) this.refusedKeys.add(key);
    await new Promise((r) => setImmediate(r));
    this.refusedKeys.delete(key);
    if (refused) throw new Error(`refused ${name}`);
    this.published.push(name);
  }
}

describe.runIf(run)('outbox relay: one row never stops the others (real Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let n = 0;
  /** A fresh schema per test, with the outbox and its relay tables. */
  const freshSchema = async () => {
    const schema = `relay_${++n}`;
    await migrateSchema(db.knex, schema, [{ name: '001', up: (k, s) => createMessagingTables(k, s), down: async () => undefined }]);
    return schema;
  };
  const enqueue = (outbox: Outbox, rows: [key: string, value: ProgramMessage][]) =>
    db.knex.transaction(async (trx) => {
      for (const [key, value] of rows) await outbox.enqueue(trx, ProgramsTopic, key, value);
    });
  const outboxRows = async (schema: string) => ((await db.knex.withSchema(schema).table('outbox').orderBy('seq')) as { key: string; value: ProgramMessage }[]).map((r) => `${r.key}:${r.value.name}`);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, dataDir: '', logger: createLogger({ name: 't', level: 'silent' }) });
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('quarantines a row the topic\'s Avro schema refuses, with the reason; other keys flow, its key waits; discard lets the key go on', async () => {
    const schema = await freshSchema();
    const transport = new InProcessTransport({ logger: createLogger({ name: 't', level: 'silent' }) });
    const seen: string[] = [];
    await transport.subscribe(ProgramsTopic, 'read-model', async (m) => void seen.push(`${m.meta.key}:${m.value.name}`));
    const log = capture();
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger: log.logger, topics: [ProgramsTopic], pollMs: 20 });
    // An int of the Avro schema that the API took as any integer (the value that stopped the relay).
    const poison = { ...program('a', 'a2'), rates: { upfront_per_kwh: 2147483648, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 9007199254740991 } };
    await enqueue(outbox, [
      ['a', program('a', 'a1')],
      ['b', program('b', 'b1')],
      ['a', poison],
      ['b', program('b', 'b2')],
      ['a', program('a', 'a3')],
    ]);
    // More than a batch behind it: nothing stalls.
    await enqueue(outbox, Array.from({ length: 250 }, (_, i) => [`c${i}`, program(`c${i}`, `c${i}`)] as [string, ProgramMessage]));
    outbox.start();
    try {
      await waitFor(async () => (await outboxRows(schema)).length === 1, { timeoutMs: 15_000, what: 'every row but the held one published' });
      expect(await outboxRows(schema)).toEqual(['a:a3']);
      expect(seen.filter((s) => !s.startsWith('c'))).toEqual(['a:a1', 'b:b1', 'b:b2']);
      expect(seen.filter((s) => s.startsWith('c'))).toHaveLength(250);

      const [q] = await listQuarantined(db.knex, schema);
      expect(q).toMatchObject({ topic: ProgramsTopic.name, key: 'a', attempts: 0, discarded_at: null });
      expect((q!.value as ProgramMessage).name).toBe('a2');
      expect(q!.reason).toContain('does not fit the Avro schema of efs.catalog.programs');
      expect(q!.reason).toContain('rates.upfront_per_kwh is not a valid int');
      expect(q!.reason).toContain('rates.yearly_per_device is not a valid int');
      expect(outbox.quarantined).toBe(1);
      const lines = log.lines().filter((l) => l.msg.startsWith('outbox row quarantined'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'error', topic: ProgramsTopic.name, key: 'a', message_id: q!.id, quarantined_total: 1 });

      // Still held while the quarantined row is there, however often the relay looks; flush()
      // counts it as done (it cannot be published until someone decides).
      await new Promise((r) => setTimeout(r, 200));
      await outbox.flush();
      expect(await outboxRows(schema)).toEqual(['a:a3']);
      // A retry of a row that still cannot be carried quarantines it again; the key still waits.
      expect(await retryQuarantined(db.knex, schema, [q!.id])).toEqual([q!.id]);
      await waitFor(async () => (await listQuarantined(db.knex, schema)).length === 1, { what: 'quarantined again' });
      expect(await outboxRows(schema)).toEqual(['a:a3']);
      // Discarded (kept on record), the key's later row flows.
      expect(await discardQuarantined(db.knex, schema, [q!.id])).toEqual([q!.id]);
      await waitFor(async () => (await outboxRows(schema)).length === 0, { what: 'the held row published' });
      expect(seen.filter((s) => s.startsWith('a:'))).toEqual(['a:a1', 'a:a3']);
      expect(await listQuarantined(db.knex, schema)).toEqual([]);
      expect(await listQuarantined(db.knex, schema, { includeDiscarded: true })).toHaveLength(1);
    } finally {
      await outbox.stop();
    }
  });

  it('retries a row the transport refuses alone with backoff while others flow, quarantines it after its attempts, and a retry publishes it ahead of its key\'s later rows', async () => {
    const schema = await freshSchema();
    const publisher = new ScriptedPublisher();
    publisher.refuse = (name) => name === 'x1';
    const outbox = new Outbox({ knex: db.knex, schema, publisher, logger: createLogger({ name: 't', level: 'silent' }), topics: [ProgramsTopic], pollMs: 10, retryBaseMs: 20, maxBackoffMs: 50, maxAttempts: 3 });
    await enqueue(outbox, [['x', program('x', 'x1')], ['x', program('x', 'x2')], ['y', program('y', 'y1')]]);
    outbox.start();
    try {
      // Other rows keep arriving and flowing while x1 is retried.
      for (let i = 0; i < 20 && (await listQuarantined(db.knex, schema)).length === 0; i++) {
        await enqueue(outbox, [[`z${i}`, program(`z${i}`)]]);
        await new Promise((r) => setTimeout(r, 30));
      }
      const [q] = await listQuarantined(db.knex, schema);
      expect(q).toMatchObject({ key: 'x', attempts: expect.any(Number) });
      expect(q!.reason).toMatch(/publishing failed \d+ times while other rows went through; last error: Error: refused x1/);
      expect(publisher.published).toContain('y1');
      expect(publisher.published).not.toContain('x2');
      await waitFor(async () => (await outboxRows(schema)).join() === 'x:x2', { what: 'only the held row left' });

      publisher.refuse = () => false;
      await retryQuarantined(db.knex, schema, []);
      await waitFor(async () => (await outboxRows(schema)).length === 0, { what: 'x1 and x2 published' });
      expect(publisher.published.filter((p) => p.startsWith('x'))).toEqual(['x1', 'x2']);
    } finally {
      await outbox.stop();
    }
  });

  it('pauses with backoff when nothing can be published (an outage), blames no row, logs once, and publishes everything in order after', async () => {
    const schema = await freshSchema();
    const publisher = new ScriptedPublisher();
    publisher.refuse = () => true;
    const log = capture();
    const outbox = new Outbox({ knex: db.knex, schema, publisher, logger: log.logger, topics: [ProgramsTopic], pollMs: 5, retryBaseMs: 100, maxBackoffMs: 400, maxAttempts: 2 });
    await enqueue(outbox, Array.from({ length: 30 }, (_, i) => [`k${i % 3}`, program(`k${i % 3}`, `n${i}`)] as [string, ProgramMessage]));
    outbox.start();
    try {
      await waitFor(() => publisher.attempts > 0, { what: 'a first attempt' });
      await new Promise((r) => setTimeout(r, 1500));
      // Polled every 5 ms, but tried only at the backoff's pace: far fewer than 300 passes' worth.
      expect(publisher.attempts).toBeLessThan(30 * 12);
      const passes = publisher.attempts;
      expect(await listQuarantined(db.knex, schema)).toEqual([]);
      const warnings = log.lines().filter((l) => l.level === 'warn');
      expect(warnings.map((w) => w.msg)).toEqual(['outbox relay cannot publish; pausing and retrying with backoff']);

      publisher.refuse = () => false;
      await waitFor(async () => (await outboxRows(schema)).length === 0, { timeoutMs: 5000, what: 'published after the outage' });
      // Every row once, each key in its order (keys need not keep their order among each other).
      expect([...publisher.published].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `n${i}`).sort());
      for (let k = 0; k < 3; k++) {
        const ofKey = Array.from({ length: 10 }, (_, j) => `n${j * 3 + k}`);
        expect(publisher.published.filter((p) => ofKey.includes(p))).toEqual(ofKey);
      }
      expect(await listQuarantined(db.knex, schema)).toEqual([]);
      expect(log.lines().some((l) => l.msg === 'outbox relay publishing again')).toBe(true);
      expect(passes).toBeGreaterThan(0);
    } finally {
      await outbox.stop();
    }
  });

  it('lets one relay of a schema publish at a time (a lease), and another take over when it stops', async () => {
    const schema = await freshSchema();
    const first = new ScriptedPublisher();
    const second = new ScriptedPublisher();
    const silent = createLogger({ name: 't', level: 'silent' });
    const a = new Outbox({ knex: db.knex, schema, publisher: first, logger: silent, topics: [ProgramsTopic], pollMs: 10 });
    const b = new Outbox({ knex: db.knex, schema, publisher: second, logger: silent, topics: [ProgramsTopic], pollMs: 10 });
    a.start();
    await waitFor(async () => (await db.knex.withSchema(schema).table('outbox_relay_lease').first()) !== undefined, { what: 'a holds the lease' });
    b.start();
    try {
      for (let i = 0; i < 10; i++) await enqueue(a, [['k', program('k', `v${i}`)]]);
      await waitFor(async () => (await outboxRows(schema)).length === 0, { what: 'published' });
      expect(first.published).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`));
      expect(second.published).toEqual([]);
      await a.stop();
      for (let i = 10; i < 15; i++) await enqueue(b, [['k', program('k', `v${i}`)]]);
      await waitFor(async () => (await outboxRows(schema)).length === 0, { what: 'published by b' });
      expect(second.published).toEqual(['v10', 'v11', 'v12', 'v13', 'v14']);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
