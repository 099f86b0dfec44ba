import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Site as SiteIn } from '@efs/api';
import { DevicesTopic, SitesTopic, withRequestDeadline } from '@efs/contracts';
import { migrateSchema, openDatabase, Outbox, type Database } from '@efs/db';
import { AppError } from '@efs/errors';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { systemClock } from '@efs/runtime';
import { createTestDatabase, fullSite, holdPool, tierAvailable, waitFor, type TestDatabase } from '@efs/testing';
import { migrations } from '../migrations/index.ts';
import { KnexCommissioningStore } from '../src/store/commissioningStore.ts';
import { SiteWriter } from '../src/store/siteWriter.ts';
import { COMMISSIONING_SCHEMA } from '../src/context.ts';

const run = await tierAvailable('postgres');
const logger = createLogger({ name: 'commissioning-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const integrator = 'integrator-1';

const battery = (siteId: string, id: string) => ({
  id,
  site_id: siteId,
  manufacturer_name: 'Acme',
  product_name: 'PowerWall 9000',
  serial_number: `SN-${id}`,
  type: 'BATTERY' as const,
  attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 },
  install_date: '2024-05-01T10:00:00.000Z',
});

/** What a createSite answered: the site's id, or the error's code, message and fields. */
const answer = (p: Promise<{ site: { id: string } }>) =>
  p.then(
    (r) => ({ created: r.site.id }),
    (err: unknown) => (err instanceof AppError ? { code: err.code, message: err.message, errors: err.errors } : { thrown: String(err) }),
  );

describe.runIf(run)('SiteWriter.createSite with group commit, on real Postgres', () => {
  let tdb: TestDatabase;
  let db: Database;
  let transport: InProcessTransport;
  let outbox: Outbox;
  let writer: SiteWriter;
  /** Statements that inserted sites, each with how many. */
  const siteInserts: number[] = [];
  const announced: string[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, dataDir: '', logger });
    await migrateSchema(db.knex, COMMISSIONING_SCHEMA, migrations);
    transport = new InProcessTransport({ logger });
    await transport.start();
    await transport.subscribe(SitesTopic, 'test-sites', async (m) => void announced.push(`site ${m.value.id}`));
    await transport.subscribe(DevicesTopic, 'test-devices', async (m) => void announced.push(`device ${m.value.id}`));
    const store = new KnexCommissioningStore(db.knex, COMMISSIONING_SCHEMA);
    outbox = new Outbox({ knex: db.knex, schema: COMMISSIONING_SCHEMA, publisher: transport, logger, topics: [SitesTopic, DevicesTopic] });
    outbox.start();
    writer = new SiteWriter({ knex: db.knex, store, outbox, clock: systemClock, groupCommit: true });
    db.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => {
      const m = /insert into "commissioning"\."sites" \(([^)]*)\) values (.*?\))( returning|\)|$)/.exec(q.sql);
      if (m) siteInserts.push((m[2]!.match(/\),\s*\(/g)?.length ?? 0) + 1);
    });
  });
  afterAll(async () => {
    await outbox?.stop();
    await transport?.stop();
    await db?.close();
    await tdb?.drop();
  });

  const create = (siteId: string, deviceIds: string[]) => writer.createSite(integrator, SiteIn.parse(fullSite(siteId)), deviceIds.map((d) => battery(siteId, d)));

  it('sites created while one is written go in one statement together; one whose request passed its deadline meanwhile is left out (503, nothing stored)', async () => {
    siteInserts.length = 0;
    const ids = Array.from({ length: 20 }, (_, i) => `together-${i}`);
    // Every connection held: the first write waits for one, the rest wait behind it.
    const release = await holdPool(db.knex, 10);
    const pending = ids.map((id) => answer(create(id, [`${id}-a`, `${id}-b`])));
    const late = answer(withRequestDeadline(Date.now() + 50, () => create('late-site', ['late-device'])));
    await new Promise((r) => setTimeout(r, 150));
    await release();
    expect(await Promise.all(pending)).toEqual(ids.map((id) => ({ created: id })));
    expect(await late).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('passed its deadline'), errors: [] });
    // The first alone, the other nineteen in one statement.
    expect(siteInserts).toEqual([1, 19]);
    await waitFor(() => announced.filter((a) => a.includes('together-')).length === 60, { what: 'every site and device announced' });
    expect(await db.knex.withSchema(COMMISSIONING_SCHEMA).table('sites').where({ id: 'late-site' }).first()).toBeUndefined();
    await outbox.flush();
    await transport.idle();
    expect(announced.filter((a) => a.includes('late-'))).toEqual([]);
  });

  it('one conflicting site in a batch fails alone: every request answers what it would have alone, and only the stored ones are announced', async () => {
    await create('taken-site', ['taken-device']);
    const burst: [string, string[]][] = [
      ['fine-0', ['fine-0-a', 'fine-0-b']],
      ['fine-1', ['fine-1-a', 'fine-1-b']],
      ['taken-site', ['new-device-x']],
      ['fine-2', ['fine-2-a', 'taken-device']],
      ['fine-3', ['shared-device', 'fine-3-b']],
      ['fine-4', ['fine-4-a', 'fine-4-b']],
      ['fine-5', ['shared-device']],
      ['fine-6', ['fine-6-a', 'fine-6-b']],
    ];
    siteInserts.length = 0;
    const answers = await Promise.all(burst.map(([id, devices]) => answer(create(id, devices))));
    expect(answers).toEqual([
      { created: 'fine-0' },
      { created: 'fine-1' },
      { code: 'CONFLICT', message: 'Site taken-site exists already', errors: [{ message: 'Site taken-site exists already', path: 'site/id' }] },
      { code: 'CONFLICT', message: 'Device taken-device exists already', errors: [{ message: 'Device taken-device exists already', path: 'devices/1/id' }] },
      { created: 'fine-3' },
      { created: 'fine-4' },
      // Its device went to fine-3, submitted before it in the same batch.
      { code: 'CONFLICT', message: 'Device shared-device exists already', errors: [{ message: 'Device shared-device exists already', path: 'devices/0/id' }] },
      { created: 'fine-6' },
    ]);
    expect(Math.max(...siteInserts)).toBeGreaterThan(1); // a batch was tried
    const sites = (await db.knex.withSchema(COMMISSIONING_SCHEMA).table('sites').select('id').orderBy('id')).map((r: { id: string }) => r.id);
    expect(sites.filter((s) => !s.startsWith('together-'))).toEqual(['fine-0', 'fine-1', 'fine-3', 'fine-4', 'fine-6', 'taken-site']);
    const devices = (await db.knex.withSchema(COMMISSIONING_SCHEMA).table('devices').where('site_id', 'like', 'fine-%').select('id', 'site_id')) as { id: string; site_id: string }[];
    expect(devices.map((d) => `${d.site_id}/${d.id}`).sort()).toEqual(['fine-0/fine-0-a', 'fine-0/fine-0-b', 'fine-1/fine-1-a', 'fine-1/fine-1-b', 'fine-3/fine-3-b', 'fine-3/shared-device', 'fine-4/fine-4-a', 'fine-4/fine-4-b', 'fine-6/fine-6-a', 'fine-6/fine-6-b']);
    await outbox.flush();
    await transport.idle();
    const burstAnnounced = announced.filter((a) => /fine-|taken-|shared-|new-device/.test(a)).sort();
    expect(burstAnnounced).toEqual(
      ['taken-site', 'fine-0', 'fine-1', 'fine-3', 'fine-4', 'fine-6'].map((s) => `site ${s}`)
        .concat(['taken-device', 'fine-0-a', 'fine-0-b', 'fine-1-a', 'fine-1-b', 'shared-device', 'fine-3-b', 'fine-4-a', 'fine-4-b', 'fine-6-a', 'fine-6-b'].map((d) => `device ${d}`))
        .sort(),
    );
  });
});
