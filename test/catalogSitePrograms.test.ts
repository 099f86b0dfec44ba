import { describe, expect, it } from 'vitest';
import { CatalogOperations } from '@efs/api';
import { tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { NO_PROGRAM_ZIP, SandboxProgramIds, ask, asSite, battery, evCharger, expectError, expectProgram, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');
const ids = (r: { body: { id: string }[] }) => r.body.map((p) => p.id);
const earnings = (p: { earnings_for_site_upfront: number; earnings_for_site_yearly: number }) => [p.earnings_for_site_upfront, p.earnings_for_site_yearly];

describe.runIf(run)('GET /v1/site/{siteId}/programs and /program/{programId} (site token)', () => {
  const t = useTestSystem();

  const newSite = async (site: Record<string, unknown>, devices: (id: string) => unknown[]): Promise<{ id: string; app: ApiClient }> => {
    const id = uid('site');
    const r = await t.api.post('/v1/commission', { site: { id, ...site }, devices: devices(id), can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { id, app: await asSite(t, id) };
  };

  it("defaults to the site's zip code and device types; earnings from the site's devices", async () => {
    // Right after commissioning: the catalog's read model may trail, so this also exercises the ask-commissioning path.
    const s = await newSite({ zip_code: '88801' }, (id) => [battery(id, uid('b')), battery(id, uid('b'), { attributes: { battery_capacity_wh: 6500, battery_power_input_w: 3000, battery_power_output_w: 2500 } })]);
    const r = await s.app.get(`/v1/site/${s.id}/programs`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(ids(r)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
    for (const p of r.body) expectProgram(p);
    // 20 kWh and 7.5 kW in all.
    expect(earnings(r.body[0])).toEqual([200, 150]);
    expect(earnings(r.body[1])).toEqual([600, 300]);
  });

  it('an EV charger site at 88802 sees the EV program', async () => {
    const s = await newSite({ zip_code: '88802' }, (id) => [evCharger(id, uid('e'), { attributes: { max_charge_power_w: 7400 } })]);
    const r = await s.app.get(`/v1/site/${s.id}/programs`);
    expect(ids(r)).toEqual([SandboxProgramIds.evSmartCharging]);
    expect(earnings(r.body[0])).toEqual([50, 97]);
  });

  it('zip_code and device_type override the defaults; device_type repeats; 88803 has none', async () => {
    const s = await newSite({ zip_code: '88800' }, (id) => [battery(id, uid('b'))]);
    expect((await s.app.get(`/v1/site/${s.id}/programs?zip_code=${NO_PROGRAM_ZIP}`)).body).toEqual([]);
    expect(ids(await s.app.get(`/v1/site/${s.id}/programs?zip_code=88802`))).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
    const ev = await s.app.get(`/v1/site/${s.id}/programs?device_type=EV_CHARGER`);
    expect(ids(ev)).toEqual([SandboxProgramIds.evSmartCharging]);
    // The site has no EV charger, so the EV program earns it nothing.
    expect(earnings(ev.body[0])).toEqual([0, 0]);
    const both = await s.app.get(`/v1/site/${s.id}/programs?device_type=BATTERY&device_type=EV_CHARGER`);
    expect(ids(both).sort()).toEqual(Object.values(SandboxProgramIds).sort());
    expect(ids(await s.app.get(`/v1/site/${s.id}/programs?device_type=BATTERY&skip=1&limit=1`))).toEqual([SandboxProgramIds.batteryCapacity]);
    expect((await s.app.get(`/v1/site/${s.id}/programs?zip_code=99999&device_type=BATTERY`)).body).toEqual([]);
  });

  it.each([['device_type=SOLAR'], ['zip_code=12345678901'], ['limit=0']])('400 for %s', async (q) => {
    const s = await newSite({ zip_code: '88801' }, () => []);
    expectError(await s.app.get(`/v1/site/${s.id}/programs?${q}`), 400, 'VALIDATION_ERROR');
  });

  it('a site without devices sees every program of its zip code, earning nothing', async () => {
    const s = await newSite({ zip_code: '88801' }, () => []);
    const r = await s.app.get(`/v1/site/${s.id}/programs`);
    expect(ids(r).sort()).toEqual(Object.values(SandboxProgramIds).sort());
    for (const p of r.body) expect(earnings(p)).toEqual([0, 0]);
  });

  it('follows the site and its devices as they change', async () => {
    const s = await newSite({}, (id) => [battery(id, uid('b'))]);
    // No zip code yet: not an empty list, which would say "no program here" (decisions.md, Programs).
    expectError(await s.app.get(`/v1/site/${s.id}/programs`), 422, 'SITE_INFO_INCOMPLETE');
    expect((await s.app.patch(`/v1/site/${s.id}`, { zip_code: '88802' })).status).toBe(200);
    await waitFor(async () => (await s.app.get(`/v1/site/${s.id}/programs`)).body.length === 2, { what: 'programs after the zip code was set' });
    const ev = evCharger(s.id, uid('e'));
    expect((await s.app.post(`/v1/site/${s.id}/devices`, ev)).status).toBe(200);
    await waitFor(async () => (await s.app.get(`/v1/site/${s.id}/programs`)).body.length === 3, { what: 'the EV program after adding a charger' });
    expect((await s.app.delete(`/v1/site/${s.id}/device/${ev.id}`)).status).toBe(200);
    await waitFor(async () => (await s.app.get(`/v1/site/${s.id}/programs`)).body.length === 2, { what: 'no EV program after removing the charger' });
  });

  it('reads one program with earnings for the site; 404 for an unknown program; 400 for a malformed id', async () => {
    const s = await newSite({ zip_code: '88801' }, (id) => [battery(id, uid('b'))]);
    const r = await s.app.get(`/v1/site/${s.id}/program/${SandboxProgramIds.batteryCapacity}`);
    expect(r.status).toBe(200);
    expectProgram(r.body);
    expect(r.body).toMatchObject({ id: SandboxProgramIds.batteryCapacity, name: 'Sandbox Battery Capacity', earnings_for_site_upfront: 388, earnings_for_site_yearly: 200 });
    const listed = (await s.app.get(`/v1/site/${s.id}/programs`)).body.find((p: { id: string }) => p.id === SandboxProgramIds.batteryCapacity);
    expect(r.body).toEqual(listed);
    expectError(await s.app.get(`/v1/site/${s.id}/program/00000000-0000-4000-8000-000000000000`), 404, 'NOT_FOUND');
    expectError(await s.app.get(`/v1/site/${s.id}/program/not-a-uuid`), 400, 'VALIDATION_ERROR');
  });

  it('403 for a client token and for another site\'s token; 404 for a site of another integrator', async () => {
    const a = await newSite({ zip_code: '88801' }, () => []);
    const b = await newSite({ zip_code: '88801' }, () => []);
    expectError(await t.api.get(`/v1/site/${a.id}/programs`), 403, 'FORBIDDEN');
    expectError(await b.app.get(`/v1/site/${a.id}/programs`), 403, 'FORBIDDEN');
    expectError(await b.app.get(`/v1/site/${a.id}/program/${SandboxProgramIds.batteryCapacity}`), 403, 'FORBIDDEN');
    const foreign = await ask(t, CatalogOperations.listSitePrograms, { kind: 'CLIENT', integrator_id: uid('other') }, { params: { siteId: a.id } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NOT_FOUND');
  });

  it('op eligiblePrograms answers only SYSTEM principals', async () => {
    const body = { zip_code: '88801', devices: [{ type: 'BATTERY', attributes: { battery_capacity_wh: 10000, battery_power_input_w: 1000, battery_power_output_w: 1000 } }] };
    const r = await ask(t, CatalogOperations.eligiblePrograms, { kind: 'SYSTEM', integrator_id: 'sandbox-integrator' }, { body });
    expect(r.status).toBe(200);
    expect(r.body.map((p: { id: string }) => p.id)).toEqual([SandboxProgramIds.batteryAutoEnroll, SandboxProgramIds.batteryCapacity]);
    expect((await ask(t, CatalogOperations.eligiblePrograms, { kind: 'CLIENT', integrator_id: 'sandbox-integrator' }, { body })).status).toBe(403);
  });
});
