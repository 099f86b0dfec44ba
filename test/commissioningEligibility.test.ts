/**
 * On Kafka, commissioning answers a commission's eligibility from its read model of the programs
 * topic once the transport tells it the model is up to date as of the commission (elsewhere it
 * asks the catalog). Its answers must be the catalog's own, byte for byte, right after a program
 * is created or changed too: the catalog answers a change only once it is on the topic.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalPrincipal } from '@efs/access';
import { CatalogOperations, type ProgramType } from '@efs/api';
import { SANDBOX_INTEGRATOR_ID } from '@efs/contracts';
import { call } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl, tierAvailable } from '@efs/testing';
import { startSystem } from '@efs/cli';
import { apiClient, SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY } from '@efs/testing';
import { startTestSystem, testSystemEnv, type TestSystem } from './harness/system.ts';
import { battery, evCharger, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('kafka');

let zipSeq = 71000 + Math.floor(Math.random() * 900) * 10;
const newZip = () => String(zipSeq++);

describe.runIf(run)('commission eligibility on Kafka, from commissioning\'s read model of the programs topic', { timeout: 240_000 }, () => {
  const prefix = `ce${randomBytes(4).toString('hex')}.`;
  let t: TestSystem;
  beforeAll(async () => {
    t = await startTestSystem({ KAFKA_BROKERS: testKafkaBrokers(), SCHEMA_REGISTRY_URL: testRegistryUrl(), KAFKA_TOPIC_PREFIX: prefix });
  });
  afterAll(async () => {
    await t?.stop();
    if (run) await deleteTopicsWithPrefix(prefix);
  });

  const create = async (body: Record<string, unknown>) => {
    const r = await t.utility.post('/v1/programs', body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { id: string };
  };
  const change = async (id: string, body: Record<string, unknown>) => {
    const r = await t.utility.patch(`/v1/programs/${id}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  type Device = { type: string; attributes: Record<string, number> };
  /** A commission's programs next to the catalog's own answer to the same question, asked right after. */
  const commission = async (zip: string, devices: (site: string) => Device[]) => {
    const site = uid('site');
    const body = devices(site);
    const r = await t.api.post('/v1/commission', { site: { id: site, zip_code: zip }, devices: body, can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const catalog = await call(t.system.transport, CatalogOperations.eligiblePrograms, {
      principal: internalPrincipal(SANDBOX_INTEGRATOR_ID),
      body: { zip_code: zip, devices: body.map((d) => ({ type: d.type as 'BATTERY' | 'EV_CHARGER', attributes: d.attributes as Record<string, number> })) },
    }, { timeoutMs: 5000 });
    return { programs: r.body.programs as ProgramType[], catalog };
  };

  it('offers a program created a moment before, as changed a moment before, and no longer once it stops covering the zip code', async () => {
    const zip = newZip();
    const p = await create({ name: 'Fresh', eligible_device_types: ['BATTERY'], zip_codes: [zip], rates: { upfront_per_kwh: 1, upfront_per_device: 10, yearly_per_kw: 2, yearly_per_device: 3 } });
    const created = await commission(zip, (s) => [battery(s, uid('b'))]);
    expect(created.programs.map((x) => [x.id, x.name, x.earnings_for_site_upfront])).toEqual([[p.id, 'Fresh', 24]]);
    expect(created.programs).toEqual(created.catalog);

    await change(p.id, { name: 'Changed', rates: { upfront_per_device: 100 } });
    const changed = await commission(zip, (s) => [battery(s, uid('b'))]);
    expect(changed.programs.map((x) => [x.id, x.name, x.earnings_for_site_upfront])).toEqual([[p.id, 'Changed', 114]]);
    expect(changed.programs).toEqual(changed.catalog);

    await change(p.id, { zip_codes: [newZip()] });
    expect((await commission(zip, (s) => [battery(s, uid('b'))])).programs).toEqual([]);
  });

  it('answers what the catalog answers, in its order, for programs of every shape and devices of both types', async () => {
    const zip = newZip();
    await create({ name: 'Batteries', eligible_device_types: ['BATTERY'], zip_codes: [zip, newZip()], can_auto_enroll: true, participation_months: [12, 1], rates: { upfront_per_kwh: 3, upfront_per_device: 0, yearly_per_kw: 7, yearly_per_device: 1 } });
    await create({
      name: 'Chargers', description: 'Nights.', eligible_device_types: ['EV_CHARGER'], zip_codes: [zip], minimum_reserve_percentage: 10, minimum_commitment_months: 12,
      enrollment_form: [{ name: 'meter', label: 'Meter', type: 'string', hint: 'On the *meter*.' }], terms_and_conditions_text: '# Terms',
    });
    const both = await create({ name: 'Both', eligible_device_types: ['EV_CHARGER', 'BATTERY'], zip_codes: [zip], rates: { upfront_per_kwh: 0, upfront_per_device: 5, yearly_per_kw: 1, yearly_per_device: 2 } });
    await change(both.id, { terms_and_conditions_text: 'New terms', participation_months: [6, 7] });
    for (const devices of [(s: string) => [battery(s, uid('b')), evCharger(s, uid('ev'))], (s: string) => [evCharger(s, uid('ev'))], (s: string) => [battery(s, uid('b')), battery(s, uid('b'), { attributes: { battery_capacity_wh: 1, battery_power_input_w: 1, battery_power_output_w: 999_999 } })]]) {
      const { programs, catalog } = await commission(`${zip}-1234`, devices);
      expect(programs.length).toBeGreaterThan(0);
      expect(JSON.stringify(programs)).toBe(JSON.stringify(catalog));
    }
  });

  it('offers a program created on either of two replicas a moment before, through either replica', async () => {
    // A second replica of every service on the same database and topics: its catalog and the
    // first's take turns at the outbox lease, each commissioning reads the topic on its own.
    const second = await startSystem({ ...testSystemEnv(), DATABASE_URL: t.database.url, KAFKA_BROKERS: testKafkaBrokers(), SCHEMA_REGISTRY_URL: testRegistryUrl(), KAFKA_TOPIC_PREFIX: prefix });
    try {
      const replicas = [
        { utility: t.utility, api: t.api },
        { utility: apiClient(second.urls.utility, SANDBOX_UTILITY_API_KEY), api: apiClient(second.urls.public, SANDBOX_CLIENT_TOKEN) },
      ];
      for (let i = 0; i < 6; i++) {
        const zip = newZip();
        const created = await replicas[i % 2]!.utility.post('/v1/programs', { name: `Replica ${i}`, eligible_device_types: ['BATTERY'], zip_codes: [zip] });
        expect(created.status).toBe(200);
        const site = uid('site');
        const r = await replicas[(i + 1) % 2]!.api.post('/v1/commission', { site: { id: site, zip_code: zip }, devices: [battery(site, uid('b'))], can_auto_enroll: false });
        expect(r.status).toBe(200);
        expect(r.body.programs.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
      }
    } finally {
      await second.stop();
    }
  });
});
