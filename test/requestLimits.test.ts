/**
 * Request limits (libs/api): a request over a limit is answered 400 with the error body at the
 * edge, never reaching a service (so never a 503 after a timeout), and nothing of it is stored.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DEVICES_PER_REQUEST, MAX_EV_CHARGER_ATTRIBUTES, MAX_SUPPLEMENT_VALUES } from '@efs/api';
import { tierAvailable } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { asSite, battery, evCharger, expectError, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

/** A battery as short as the schema allows, so thousands of them fit under the 1 MiB body limit. */
const tinyBattery = (siteId: string, i: number) => ({
  id: `d${i}`,
  site_id: siteId,
  type: 'BATTERY',
  manufacturer_name: '',
  product_name: '',
  serial_number: '',
  install_date: '2024-05-01T00:00:00Z',
  attributes: { battery_capacity_wh: 1, battery_power_input_w: 1, battery_power_output_w: 1 },
});

describe.runIf(run)('request limits', () => {
  const t = useTestSystem();

  const siteIds = async () => ((await t.api.get('/v1/sites?limit=1000')).body as { id: string }[]).map((s) => s.id);

  describe('devices per commission', () => {
    it(`${MAX_DEVICES_PER_REQUEST} devices are commissioned`, async () => {
      const id = uid('site');
      const devices = Array.from({ length: MAX_DEVICES_PER_REQUEST }, (_, i) => battery(id, `${id}-b${i}`));
      const r = await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices, can_auto_enroll: false });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const app = await asSite(t, id);
      expect((await app.get(`/v1/site/${id}/devices?limit=1000`)).body).toHaveLength(MAX_DEVICES_PER_REQUEST);
    });

    for (const count of [MAX_DEVICES_PER_REQUEST + 1, 4_000]) {
      it(`${count.toLocaleString('en-US')} devices: 400 naming devices, nothing stored`, async () => {
        const id = uid('site');
        const body = { site: { id, zip_code: '88801' }, devices: Array.from({ length: count }, (_, i) => tinyBattery(id, i)), can_auto_enroll: false };
        expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(1024 * 1024);
        const r = await t.api.post('/v1/commission', body);
        expectError(r, 400, 'VALIDATION_ERROR');
        expect(r.body.errors).toContainEqual({ path: 'devices', message: expect.stringContaining(String(MAX_DEVICES_PER_REQUEST)) });
        expect(await siteIds()).not.toContain(id);
      });
    }

    it('the same limit holds for POST /v1/sessions', async () => {
      const id = uid('site');
      const devices = Array.from({ length: MAX_DEVICES_PER_REQUEST + 1 }, (_, i) => tinyBattery(id, i));
      const r = await t.api.post('/v1/sessions', { site: { id, zip_code: '88801' }, devices });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('devices');
      expect(await siteIds()).not.toContain(id);
    });
  });

  it(`an EV charger with more than ${MAX_EV_CHARGER_ATTRIBUTES} attributes: 400`, async () => {
    const id = uid('site');
    const attributes = Object.fromEntries(Array.from({ length: MAX_EV_CHARGER_ATTRIBUTES + 1 }, (_, i) => [`a${i}`, i]));
    const r = await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [evCharger(id, uid('ev'), { attributes })], can_auto_enroll: false });
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('devices/0/attributes');
    expect(await siteIds()).not.toContain(id);
  });

  it('strings longer than their limit: 400 naming the field', async () => {
    const id = uid('site');
    const cases: [Record<string, unknown>, string][] = [
      [{ site: { id: 'x'.repeat(256) }, devices: [], can_auto_enroll: false }, 'site/id'],
      [{ site: { id, first_name: 'x'.repeat(256) }, devices: [], can_auto_enroll: false }, 'site/first_name'],
      [{ site: { id }, devices: [battery(id, uid('b'), { serial_number: 'x'.repeat(256) })], can_auto_enroll: false }, 'devices/0/serial_number'],
    ];
    for (const [body, path] of cases) {
      const r = await t.api.post('/v1/commission', body);
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect(await siteIds()).not.toContain(id);
  });

  it(`a supplement with more than ${MAX_SUPPLEMENT_VALUES} named values: 400`, async () => {
    const id = uid('site');
    expect((await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [], can_auto_enroll: false })).status).toBe(200);
    const data = Object.fromEntries(Array.from({ length: MAX_SUPPLEMENT_VALUES + 1 }, (_, i) => [`k${i}`, 'v']));
    const r = await t.api.post('/v1/supplements', { site_id: id, data });
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('data');
  });

  it('list limits: more than 1,000 per page and more than 10 repeated device types are refused', async () => {
    expectError(await t.api.get('/v1/programs?limit=1001'), 400, 'VALIDATION_ERROR');
    const id = uid('site');
    expect((await t.api.post('/v1/commission', { site: { id, zip_code: '88801' }, devices: [], can_auto_enroll: false })).status).toBe(200);
    const app = await asSite(t, id);
    expect((await app.get(`/v1/site/${id}/programs?${Array.from({ length: 10 }, () => 'device_type=BATTERY').join('&')}`)).status).toBe(200);
    expectError(await app.get(`/v1/site/${id}/programs?${Array.from({ length: 11 }, () => 'device_type=BATTERY').join('&')}`), 400, 'VALIDATION_ERROR');
  });

  it('a utility program whose enrollment form hint is over 2,000 characters: 400', async () => {
    const r = await t.utility.post('/v1/programs', {
      name: 'Limits',
      eligible_device_types: ['BATTERY'],
      zip_codes: ['88801'],
      enrollment_form: [{ name: 'account', label: 'Account', type: 'string', hint: 'x'.repeat(2001) }],
    });
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('enrollment_form/0/hint');
  });
});
