/**
 * One tenant's odd value must not stop the system: an outbox row its topic's Avro schema cannot
 * carry (here a device attribute beyond Avro's long, written straight into commissioning's outbox
 * as a bug would) is quarantined, and everything behind it keeps flowing for every tenant: a new
 * program becomes enrollable, site changes reach the catalog. Only the later events of that one
 * device wait, until an operator retries or discards the row with `efs outbox`.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DevicesTopic, deviceKey } from '@efs/contracts';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { asSite, battery, completeSite, uid } from './enrollmentHelpers.ts';

const run = await tierAvailable('postgres');
const INTEGRATOR = 'sandbox-integrator';

describe.runIf(run)('a poisoned outbox row on the main command (Postgres, in-process transport)', () => {
  // The catalog answers from its read model at once, so what reaches it is what the test sees.
  const t = useTestSystem({ CATALOG_SITE_SETTLE_MS: '1' });

  const efs = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['cli/src/main.ts', ...args], { env: { ...process.env, DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' } }).catch((e: { stdout: string; code: number }) => ({ stdout: `${e.stdout}exit ${e.code}` }));
    return stdout;
  };
  const outboxRows = async () => (await t.system.db.knex.withSchema('commissioning').table('outbox').select('key')) as { key: string }[];

  it('quarantines the row, keeps every other tenant\'s events flowing, holds only that device\'s later events, and lets an operator discard it', { timeout: 180_000 }, async () => {
    const siteId = uid('poison');
    const deviceId = uid('bat');
    expect((await t.api.post('/v1/commission', { site: { id: siteId, ...completeSite }, devices: [battery(siteId, deviceId)], can_auto_enroll: false })).status).toBe(200);
    const key = deviceKey(INTEGRATOR, siteId, deviceId);
    const now = new Date().toISOString();
    await t.system.db.knex.withSchema('commissioning').table('outbox').insert({
      id: randomUUID(),
      topic: DevicesTopic.name,
      key,
      value: JSON.stringify({
        ...battery(siteId, deviceId),
        integrator_id: INTEGRATOR,
        attributes: { battery_capacity_wh: 9007199254740991, battery_power_input_w: 1, battery_power_output_w: 1 },
        reserve_percentage: null,
        created_at: now,
        updated_at: now,
        deleted: false,
      }),
    });
    // That device's next event waits behind it.
    const site = await asSite(t, siteId);
    expect((await site.patch(`/v1/site/${siteId}/device/${deviceId}`, { serial_number: 'SN-after-poison' })).status).toBe(200);

    // Hundreds of events of other sites behind it keep flowing.
    const others = Array.from({ length: 60 }, () => uid('after'));
    const devicesOf = new Map<string, string[]>();
    for (const id of others) {
      devicesOf.set(id, [uid('bat'), uid('bat')]);
      expect((await t.api.post('/v1/commission', { site: { id, ...completeSite }, devices: devicesOf.get(id)!.map((d) => battery(id, d)), can_auto_enroll: false })).status).toBe(200);
    }
    await waitFor(async () => (await outboxRows()).length === 1, { timeoutMs: 20_000, what: 'everything but the held event published' });
    expect((await outboxRows()).map((r) => r.key)).toEqual([key]);

    // A new program is enrollable (the enrollment service learned of it) ...
    const created = await t.utility.post('/v1/programs', { name: `After poison ${uid('p')}`, eligible_device_types: ['BATTERY'], zip_codes: ['88801'] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const lastSite = others.at(-1)!;
    const lastDevices = devicesOf.get(lastSite)!;
    const enrolled = await waitFor(
      async () => {
        const r = await (await asSite(t, lastSite)).post(`/v1/site/${lastSite}/enrollments`, { program_id: created.body.id, device_ids: lastDevices });
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 10_000, what: 'the new program enrollable' },
    );
    expect(enrolled.body).toMatchObject({ program_id: created.body.id, status: 'PENDING' });
    // ... and a site change reaches the catalog's read model.
    const moved = others[0]!;
    const movedSite = await asSite(t, moved);
    expect((await movedSite.get(`/v1/site/${moved}/programs`)).body.length).toBeGreaterThan(0);
    expect((await movedSite.patch(`/v1/site/${moved}`, { zip_code: '88803' })).status).toBe(200);
    await waitFor(async () => (await movedSite.get(`/v1/site/${moved}/programs`)).body.length === 0, { what: 'the zip change in the catalog' });

    // The operator's view: the quarantined row and why; discarding it lets the device's event go.
    const listed = await efs('outbox', 'quarantined');
    expect(listed).toContain(`commissioning\t`);
    expect(listed).toContain(`${DevicesTopic.name}\t${key}`);
    expect(listed).toContain('attributes.battery_capacity_wh is not a valid long');
    expect(listed).toContain('1 quarantined outbox row(s)');
    const id = listed.split('\t')[1]!;
    expect(await efs('outbox', 'discard', 'no-such-id')).toContain('exit 1');
    expect(await efs('outbox', 'discard', id)).toContain(`discarded: commissioning ${id}`);
    await waitFor(async () => (await outboxRows()).length === 0, { what: 'the held event published' });
    expect(await efs('outbox', 'quarantined')).toContain('no quarantined outbox rows');
    expect(await efs('outbox', 'quarantined', '--all')).toContain(`discarded `);
  });
});
