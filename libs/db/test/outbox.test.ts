import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgramsTopic, withRequestDeadline, type ProgramMessage } from '@efs/contracts';
import { createMessagingTables, migrateSchema, openDatabase, Outbox, outboxEvent, processOnce, type Database } from '@efs/db';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { createTestDatabase, holdPool, tierAvailable, waitFor, type TestDatabase } from '@efs/testing';

const run = await tierAvailable('postgres');
const logger = createLogger({ name: 'test', level: 'silent' });
const schema = 'outbox_test';

const program = (id: string): ProgramMessage => ({
  id, utility_id: 'u', name: id, description: '', eligible_device_types: ['BATTERY'], zip_codes: [], can_auto_enroll: false,
  minimum_reserve_percentage: 0, minimum_commitment_months: null, participation_months: [], enrollment_form: [],
  rates: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 },
  terms_and_conditions_version: null, terms_and_conditions_text: null, auto_approve_after_ms: null,
  created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
});

describe.runIf(run)('transactional outbox and processOnce on real Postgres', () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, dataDir: '', logger });
    await migrateSchema(db.knex, schema, [
      {
        name: '001',
        up: async (k, s) => {
          await createMessagingTables(k, s);
          await k.schema.withSchema(s).createTable('things', (t) => t.text('id').primary());
        },
        down: async () => undefined,
      },
    ]);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('stores nothing for a request past its deadline, and a relay kicked from a request publishes free of that deadline', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 60_000 });
    // A consumer that writes (and announces) what it learns, after the request that announced it has passed its deadline.
    await transport.subscribe(ProgramsTopic, 'late', async (m) => {
      seen.push(m.value.id);
      if (m.value.id !== 'in-time') return;
      await waitFor(() => Date.now() > deadline + 50, { what: 'the request deadline to pass' });
      await db.knex.transaction(async (trx) => {
        await trx.withSchema(schema).table('things').insert({ id: 'consequence' });
        await outbox.enqueue(trx, ProgramsTopic, 'consequence', program('consequence'));
      });
    });
    outbox.start();
    await expect(
      withRequestDeadline(Date.now() - 1, () =>
        db.knex.transaction(async (trx) => {
          await trx.withSchema(schema).table('things').insert({ id: 'past-deadline' });
          await outbox.enqueue(trx, ProgramsTopic, 'past-deadline', program('past-deadline'));
        }),
      ),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(await db.knex.withSchema(schema).table('things').where({ id: 'past-deadline' }).first()).toBeUndefined();
    // Committed in time: what follows from it (the relay's pass, a consumer's write) is not bound by the request's deadline.
    const deadline = Date.now() + 1000;
    await withRequestDeadline(deadline, () =>
      db.knex.transaction(async (trx) => {
        await trx.withSchema(schema).table('things').insert({ id: 'in-time' });
        await outbox.enqueue(trx, ProgramsTopic, 'in-time', program('in-time'));
      }),
    );
    await waitFor(() => seen.includes('consequence'), { timeoutMs: 10_000, what: 'the consumer\'s own announcement' });
    expect(seen).not.toContain('past-deadline');
    await outbox.stop();
  });

  it('publishes an event only when its transaction commits, with the row id as message id', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    await transport.subscribe(ProgramsTopic, 'g', async (m) => void seen.push(`${m.value.id}:${m.meta.id.length}`));
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 50 });
    // What a commit listener sees: the rows it was told of, already visible to a reader outside the writer's transaction.
    const toldOf: string[][] = [];
    outbox.onCommit(() => void db.knex.withSchema(schema).table('things').whereIn('id', ['rolled-back', 'committed']).select('id').then((rows: { id: string }[]) => toldOf.push(rows.map((r) => r.id))));
    outbox.start();
    await expect(
      db.knex.transaction(async (trx) => {
        await trx.withSchema(schema).table('things').insert({ id: 'rolled-back' });
        await outbox.enqueue(trx, ProgramsTopic, 'rolled-back', program('rolled-back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await db.knex.transaction(async (trx) => {
      await trx.withSchema(schema).table('things').insert({ id: 'committed' });
      await outbox.enqueue(trx, ProgramsTopic, 'committed', program('committed'));
    });
    await waitFor(() => seen.length > 0 && toldOf.length > 0, { what: 'the committed event' });
    expect(toldOf).toEqual([['committed']]);
    await outbox.flush();
    await transport.idle();
    await outbox.stop();
    expect(seen).toEqual(['committed:36']);
    expect(await db.knex.withSchema(schema).table('outbox').count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  it('tells when rows it enqueued are published, by whichever relay of the schema holds the lease, and not before', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // In-process, a publish is acknowledged once every consumer has handled it: this one waits.
    await transport.subscribe(ProgramsTopic, 'reader', async (m) => {
      await gate;
      seen.push(m.value.id);
    });
    const holder = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 20 });
    holder.start();
    await waitFor(async () => (await db.knex.withSchema(schema).table('outbox_relay_lease').first()) !== undefined, { what: 'the first relay holding the lease' });
    const writer = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 60_000 });
    writer.start();
    const ids = await db.knex.transaction((trx) => writer.enqueue(trx, ProgramsTopic, 'announced', program('announced')));
    expect(ids).toHaveLength(1);
    expect(await writer.published(ids, 100)).toBe(false);
    const out = writer.published(ids, 10_000);
    release();
    expect(await out).toBe(true);
    expect(seen).toEqual(['announced']);
    await writer.stop();
    await holder.stop();
  });

  it('answers published() false at its timeout while its own relay is still held up publishing', async () => {
    const transport = new InProcessTransport({ logger });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The publish hangs (a slow broker): the relay's pass does not end before the gate opens.
    await transport.subscribe(ProgramsTopic, 'slow', async () => gate);
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 60_000 });
    outbox.start();
    const ids = await db.knex.transaction((trx) => outbox.enqueue(trx, ProgramsTopic, 'held', program('held')));
    // Resolves without the gate (with the relay's pass awaited it would wait for the release).
    expect(await outbox.published(ids, 100)).toBe(false);
    release();
    expect(await outbox.published(ids, 10_000)).toBe(true);
    await outbox.stop();
  });

  it('writes changes and their events in one statement: all of them, in order, or none', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    await transport.subscribe(ProgramsTopic, 'with', async (m) => void seen.push(m.value.id));
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 60_000 });
    outbox.start();
    const things = (...ids: string[]) => db.knex.withSchema(schema).table('things').insert(ids.map((id) => ({ id })));
    await outbox.writeWith([things('w1'), things('w2', 'w3')], ['w1', 'w2', 'w3'].map((id) => outboxEvent(ProgramsTopic, id, program(id))));
    // w3 is taken: the statement fails whole, so neither w4 nor any event of this write is stored.
    await expect(outbox.writeWith([things('w4'), things('w3')], [outboxEvent(ProgramsTopic, 'w4', program('w4'))])).rejects.toMatchObject({ code: '23505' });
    await expect(withRequestDeadline(Date.now() - 1, () => outbox.writeWith([things('w5')], [outboxEvent(ProgramsTopic, 'w5', program('w5'))]))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    // In time when called, past its deadline once a connection is free: nothing stored either.
    const release = await holdPool(db.knex, 10); // the whole pool
    const late = withRequestDeadline(Date.now() + 100, () => outbox.writeWith([things('w6')], [outboxEvent(ProgramsTopic, 'w6', program('w6'))]));
    late.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await release();
    await expect(late).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await waitFor(() => seen.length === 3, { what: 'the events of the first write' });
    await outbox.flush();
    await transport.idle();
    await outbox.stop();
    expect(seen).toEqual(['w1', 'w2', 'w3']);
    expect((await db.knex.withSchema(schema).table('things').whereIn('id', ['w1', 'w2', 'w3', 'w4', 'w5', 'w6']).orderBy('id')).map((r: { id: string }) => r.id)).toEqual(['w1', 'w2', 'w3']);
  });

  it('writeComposed: composes once the statement holds a connection, stores each event with its own headers, nothing when compose answers undefined', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    await transport.subscribe(ProgramsTopic, 'composed', async (m) => void seen.push(`${m.value.id} ${m.meta.headers['x-request'] ?? '-'}`));
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], pollMs: 60_000 });
    outbox.start();
    const things = (...ids: string[]) => db.knex.withSchema(schema).table('things').insert(ids.map((id) => ({ id })));
    const release = await holdPool(db.knex, 10); // the whole pool
    let composedAt: number | undefined;
    const write = outbox.writeComposed(() => {
      composedAt = Date.now();
      return {
        changes: [things('c1', 'c2')],
        events: [
          { ...outboxEvent(ProgramsTopic, 'c1', program('c1')), headers: { 'x-request': 'one' } },
          { ...outboxEvent(ProgramsTopic, 'c2', program('c2')), headers: { 'x-request': 'two' } },
          outboxEvent(ProgramsTopic, 'c3', program('c3')),
        ],
      };
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(composedAt).toBeUndefined();
    await release();
    await write;
    expect(composedAt).toBeDefined();
    await outbox.writeComposed(() => undefined);
    await waitFor(() => seen.length === 3, { what: 'the composed events' });
    await outbox.flush();
    await transport.idle();
    await outbox.stop();
    expect(seen).toEqual(['c1 one', 'c2 two', 'c3 -']);
    expect(Number((await db.knex.withSchema(schema).table('outbox').count({ n: '*' }))[0]!.n)).toBe(0);
  });

  it('publishes a burst in the order it was written', async () => {
    const transport = new InProcessTransport({ logger });
    const seen: string[] = [];
    await transport.subscribe(ProgramsTopic, 'order', async (m) => void seen.push(m.value.name));
    const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic] });
    const names = Array.from({ length: 25 }, (_, i) => `v${i}`);
    await db.knex.transaction(async (trx) => {
      for (const name of names) await outbox.enqueue(trx, ProgramsTopic, 'same-key', { ...program('same-key'), name });
    });
    await outbox.flush();
    await transport.idle();
    expect(seen).toEqual(names);
  });

  it('refuses a topic the outbox was not built for', async () => {
    const outbox = new Outbox({ knex: db.knex, schema, publisher: new InProcessTransport({ logger }), logger, topics: [] });
    await expect(db.knex.transaction((trx) => outbox.enqueue(trx, ProgramsTopic, 'k', program('k')))).rejects.toThrow(/does not publish/);
  });

  it('applies a message once: a redelivery gets the stored result and changes nothing', async () => {
    let applied = 0;
    const apply = () =>
      processOnce(db.knex, schema, 'consumer-a', 'message-1', async (trx) => {
        applied++;
        await trx.withSchema(schema).table('things').insert({ id: `applied-${applied}` });
        return { n: applied };
      });
    const results = await Promise.all([apply(), apply(), apply()]);
    expect(applied).toBe(1);
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(results.map((r) => r.result)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
  });
});

// PGlite's start takes seconds, more on a busy machine.
describe('an outbox that knows its database writes thousands of rows with COPY, on Postgres and on PGlite', { timeout: 120_000 }, () => {
  const kinds = [...(run ? (['postgres'] as const) : []), 'pglite' as const];
  it.each(kinds)('%s: publishes every row in the order written, values intact (COPY escapes tabs, line breaks, backslashes)', async (kind) => {
    const tdb = kind === 'postgres' ? await createTestDatabase() : undefined;
    const dataDir = kind === 'pglite' ? mkdtempSync(join(tmpdir(), 'efs-outbox-copy-')) : '';
    const db = await openDatabase({ url: tdb?.url, dataDir, logger });
    try {
      await migrateSchema(db.knex, schema, [{ name: '001', up: (k, s) => createMessagingTables(k, s), down: async () => undefined }]);
      const transport = new InProcessTransport({ logger });
      const seen: ProgramMessage[] = [];
      await transport.subscribe(ProgramsTopic, 'copy', async (m) => void seen.push(m.value));
      const outbox = new Outbox({ knex: db.knex, schema, publisher: transport, logger, topics: [ProgramsTopic], batchSize: 1000, kind: db.kind, pollMs: 60_000 });
      const sent = Array.from({ length: 1200 }, (_, i) => ({ ...program(`p${i % 7}`), name: `v${i}\t"tab"\nline\\back\r é 🔋` }));
      await db.knex.transaction((trx) => outbox.enqueueMany(trx, ProgramsTopic, sent.map((value) => ({ key: value.id, value }))));
      await outbox.flush();
      await transport.idle();
      expect(seen).toEqual(sent);
    } finally {
      await db.close();
      await tdb?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
