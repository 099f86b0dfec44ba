import { describe, expect, it } from 'vitest';
import { DevicesTopic, SitesTopic, deviceKey, siteKey, type DeviceMessage, type SiteMessage } from '@efs/contracts';
import { CatalogOperations } from '@efs/api';
import { send } from '@efs/messaging';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';

const run = await tierAvailable('postgres');
const INTEGRATOR = 'read-model-integrator';
const system = { kind: 'SYSTEM' as const, integrator_id: INTEGRATOR, utility_id: null, site_id: null, token_id: null };

function site(id: string, zip: string | null, updatedAt: string): SiteMessage {
  return {
    integrator_id: INTEGRATOR, id, first_name: null, last_name: null, company_name: null, email: null, state_code: null, city: null, zip_code: zip,
    street_address: null, street_address2: null, service_account_id: null, created_at: '2020-01-01T00:00:00.000Z', updated_at: updatedAt, deleted: false,
  };
}

function device(siteId: string, id: string, capacityWh: number, updatedAt: string, deleted = false): DeviceMessage {
  return {
    integrator_id: INTEGRATOR, site_id: siteId, id, manufacturer_name: null, product_name: null, serial_number: null, type: 'BATTERY',
    attributes: { battery_capacity_wh: capacityWh, battery_power_input_w: 1000, battery_power_output_w: 1000 }, reserve_percentage: null,
    install_date: '2020-01-01T00:00:00.000Z', created_at: '2020-01-01T00:00:00.000Z', updated_at: updatedAt, deleted,
  };
}

/**
 * The catalog's read model of sites and devices, fed straight onto the state topics: these sites
 * exist nowhere in commissioning, so every answer comes from the read model alone.
 */
describe.runIf(run)('program catalog: read model of sites and devices', () => {
  const t = useTestSystem({ CATALOG_SITE_SETTLE_MS: '1' });

  const programs = async (siteId: string) => {
    const reply = await send(t.system.transport, CatalogOperations.listSitePrograms, { principal: system, params: { siteId }, query: {}, body: null }, { timeoutMs: 5000 });
    return { status: reply.status, body: JSON.parse(reply.body ?? 'null') };
  };
  const flexUpfront = async (siteId: string) => (await programs(siteId)).body[0]?.earnings_for_site_upfront;
  const deviceRow = (id: string) => t.system.db.knex.withSchema('catalog').table('device_views').where({ integrator_id: INTEGRATOR, device_id: id }).first();
  const siteRow = (id: string) => t.system.db.knex.withSchema('catalog').table('site_views').where({ integrator_id: INTEGRATOR, site_id: id }).first();

  it('answers from the read model; older states never overwrite newer ones; redelivery changes nothing', async () => {
    await t.system.transport.publish(SitesTopic, siteKey(INTEGRATOR, 'rm-1'), site('rm-1', '88801', '2026-01-02T00:00:00.000Z'));
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-1', 'd1'), device('rm-1', 'd1', 10_000, '2026-01-02T00:00:00.000Z'), { messageId: 'fixed-id-1' });
    await waitFor(async () => (await flexUpfront('rm-1')) === 100, { what: 'earnings from the read model' });
    expect((await programs('rm-1')).body.map((p: { name: string }) => p.name)).toEqual(['Sandbox Battery Flex', 'Sandbox Battery Capacity']);

    // An older site state (another zip) and an older device state arrive late: both ignored.
    await t.system.transport.publish(SitesTopic, siteKey(INTEGRATOR, 'rm-1'), site('rm-1', '88803', '2026-01-01T00:00:00.000Z'));
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-1', 'd1'), device('rm-1', 'd1', 50_000, '2026-01-01T00:00:00.000Z'));
    // The same message again (same id and content) is harmless too.
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-1', 'd1'), device('rm-1', 'd1', 10_000, '2026-01-02T00:00:00.000Z'), { messageId: 'fixed-id-1' });
    // A later marker on each topic: once it is applied, everything published before it was too (per-group order).
    await t.system.transport.publish(SitesTopic, siteKey(INTEGRATOR, 'marker'), site('marker', null, '2026-01-01T00:00:00.000Z'));
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'marker', 'm'), device('marker', 'm', 1, '2026-01-01T00:00:00.000Z'));
    await waitFor(async () => (await siteRow('marker')) && (await deviceRow('m')), { what: 'markers applied' });
    expect((await siteRow('rm-1')).zip_code).toBe('88801');
    expect((await deviceRow('d1')).attributes.battery_capacity_wh).toBe(10_000);
    expect(await flexUpfront('rm-1')).toBe(100);

    // A newer state applies.
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-1', 'd1'), device('rm-1', 'd1', 20_000, '2026-01-03T00:00:00.000Z'));
    await waitFor(async () => (await flexUpfront('rm-1')) === 200, { what: 'newer device state' });
  });

  it('a tombstone removes the device; an older state arriving after it does not bring it back', async () => {
    await t.system.transport.publish(SitesTopic, siteKey(INTEGRATOR, 'rm-2'), site('rm-2', '88802', '2026-01-01T00:00:00.000Z'));
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-2', 'd2'), device('rm-2', 'd2', 10_000, '2026-01-01T00:00:00.000Z'));
    await waitFor(async () => (await flexUpfront('rm-2')) === 100, { what: 'device applied' });
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-2', 'd2'), device('rm-2', 'd2', 10_000, '2026-01-05T00:00:00.000Z', true));
    await waitFor(async () => (await programs('rm-2')).body.length === 3, { what: 'tombstone applied (no devices: every program of the zip)' });
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'rm-2', 'd2'), device('rm-2', 'd2', 10_000, '2026-01-04T00:00:00.000Z'));
    await t.system.transport.publish(DevicesTopic, deviceKey(INTEGRATOR, 'marker', 'm2'), device('marker', 'm2', 1, '2026-01-01T00:00:00.000Z'));
    await waitFor(async () => deviceRow('m2'), { what: 'marker applied' });
    expect((await deviceRow('d2')).deleted).toBe(true);
    expect((await programs('rm-2')).body.every((p: { earnings_for_site_upfront: number }) => p.earnings_for_site_upfront === 0)).toBe(true);
  });

  it('a site neither the read model nor commissioning knows is 404', async () => {
    const r = await programs('nowhere');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });
});
