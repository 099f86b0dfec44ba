import { describe, expect, it } from 'vitest';
import { startSystem } from '@efs/cli';
import { apiClient, createTestDatabase, SANDBOX_CLIENT_TOKEN, tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { testSystemEnv, useTestSystem } from './harness/system.ts';
import { fullSite, NO_PROGRAM_ZIP } from './commissioningHelpers.ts';
import { asSite, battery, capacityEnrollment, commission, completeSite, expectEnrollment, expectError, evCharger, Sandbox, uid } from './enrollmentHelpers.ts';

const run = await tierAvailable('postgres');

/**
 * What a new integrator meets when following the specification to the letter (issue 14): an
 * enrollment list that means "enrolled", errors that name the field in the API's words, no
 * silent surprises from ZIP codes, device deletion, sessions or configuration.
 */
describe.runIf(run)('conformance: what the specification promises an integrator', () => {
  const t = useTestSystem();

  const ids = (r: { body: { id: string }[] }) => r.body.map((e) => e.id);

  describe('GET /v1/site/{siteId}/enrollments lists the current enrollments', () => {
    it('ended enrollments leave the default list (empty again: the app offers programs); status=… lists them', async () => {
      // A utility's own program in a zip code of its own: its enrollments wait for its decisions
      // (sandbox programs approve themselves), and no other test's lookup meets it.
      const zip = `7${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
      const program = await t.utility.post('/v1/programs', { name: uid('p'), eligible_device_types: ['BATTERY', 'EV_CHARGER'], zip_codes: [zip] });
      expect(program.status, JSON.stringify(program.body)).toBe(200);
      const siteId = uid('site');
      const [b1, b2, ev1] = [uid('b'), uid('b'), uid('ev')];
      await commission(t, { id: siteId, ...completeSite, zip_code: zip }, [battery(siteId, b1), battery(siteId, b2), evCharger(siteId, ev1)]);
      const s = await asSite(t, siteId);
      const enroll = (deviceId: string) =>
        waitFor(async () => {
          const r = await s.post(`/v1/site/${siteId}/enrollments`, { program_id: program.body.id, device_ids: [deviceId] });
          return r.status === 200 ? r.body : undefined;
        }, { what: 'the new program reaching enrollment' });
      const canceled = await enroll(b1);
      const rejected = await enroll(b2);
      const active = await enroll(ev1);
      expect((await s.delete(`/v1/site/${siteId}/enrollments/${canceled.id}`)).body.status).toBe('UNENROLLED');
      expect((await t.utility.patch(`/v1/enrollments/${rejected.id}`, { status: 'REJECTED', status_reason: 'Not our customer' })).status).toBe(200);
      expect((await t.utility.patch(`/v1/enrollments/${active.id}`, { status: 'ACTIVE' })).status).toBe(200);

      const current = await s.get(`/v1/site/${siteId}/enrollments`);
      expect(current.status).toBe(200);
      expect(ids(current)).toEqual([active.id]);
      expect(ids(await s.get(`/v1/site/${siteId}/enrollments?status=UNENROLLED&status=REJECTED`))).toEqual([canceled.id, rejected.id]);
      expect(ids(await s.get(`/v1/site/${siteId}/enrollments?status=REJECTED`))).toEqual([rejected.id]);
      expect(ids(await s.get(`/v1/site/${siteId}/enrollments?status=PENDING`))).toEqual([]);
      expectError(await s.get(`/v1/site/${siteId}/enrollments?status=GONE`), 400, 'VALIDATION_ERROR');

      // Once the last current one ends, the list is empty and the app looks programs up again.
      expect((await s.delete(`/v1/site/${siteId}/enrollments/${active.id}`)).body.status).toBe('UNENROLLED');
      expect((await s.get(`/v1/site/${siteId}/enrollments`)).body).toEqual([]);
    });
  });

  describe('validation errors name the field', () => {
    it('an unknown key: loc ["body","id"] and path "id", like every other field', async () => {
      const siteId = uid('site');
      await commission(t, { id: siteId }, []);
      const s = await asSite(t, siteId);
      const r = await s.patch(`/v1/site/${siteId}`, { id: 'x', city: 'Reno' });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.detail).toEqual([{ loc: ['body', 'id'], msg: expect.any(String), type: expect.any(String) }]);
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'id' }]);
      expect((await s.get(`/v1/site/${siteId}`)).body.city).toBeNull();
      const b = uid('b');
      expect((await s.post(`/v1/site/${siteId}/devices`, battery(siteId, b))).status).toBe(200);
      const device = await s.patch(`/v1/site/${siteId}/device/${b}`, { type: 'EV_CHARGER', product_name: 'x', colour: 'red' });
      expectError(device, 400, 'VALIDATION_ERROR');
      expect(device.body.errors).toEqual([{ message: expect.any(String), path: 'type' }, { message: expect.any(String), path: 'colour' }]);
      expect(device.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([['body', 'type'], ['body', 'colour']]);
    });

    it('an empty or non-object body: "a JSON object is required"', async () => {
      const siteId = uid('site');
      await commission(t, { id: siteId }, []);
      const s = await asSite(t, siteId);
      for (const body of ['', 'null', '[]', '"text"']) {
        const r = await s.patch(`/v1/site/${siteId}`, body, { 'content-type': 'application/json' });
        expectError(r, 400, 'VALIDATION_ERROR');
        expect(r.body.message).toContain('a JSON object is required');
        expect(r.body.detail).toEqual([{ loc: ['body'], msg: 'a JSON object is required', type: expect.any(String) }]);
        expect(JSON.stringify(r.body)).not.toMatch(/received/);
      }
      const none = await t.api.post('/v1/commission');
      expectError(none, 400, 'VALIDATION_ERROR');
      expect(none.body.message).toContain('a JSON object is required');
    });
  });

  describe('deleting a device takes it out of its enrollments', () => {
    it('an enrollment keeps its other devices; one left with none ends UNENROLLED with a reason', async () => {
      const siteId = uid('site');
      const [b1, b2, ev1] = [uid('b'), uid('b'), uid('ev')];
      await commission(t, { id: siteId, ...completeSite }, [battery(siteId, b1), battery(siteId, b2), evCharger(siteId, ev1)]);
      const s = await asSite(t, siteId);
      const batteries = (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment([b1, b2]))).body;
      const charger = (await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.evSmartCharging, device_ids: [ev1] })).body;
      await waitFor(async () => (await t.utility.get(`/v1/enrollments/${charger.id}`)).body.status === 'ACTIVE', { what: 'sandbox approval' });

      expect((await s.delete(`/v1/site/${siteId}/device/${b1}`)).status).toBe(200);
      const kept = await waitFor(async () => {
        const e = (await t.utility.get(`/v1/enrollments/${batteries.id}`)).body;
        return e.device_ids.length === 1 ? e : undefined;
      }, { what: 'the deleted battery leaving its enrollment' });
      expect(kept.device_ids).toEqual([b2]);
      expect(['PENDING', 'ACTIVE']).toContain(kept.status);

      // The charger enrollment is ACTIVE inside no commitment; its only device goes: it ends.
      expect((await s.delete(`/v1/site/${siteId}/device/${ev1}`)).status).toBe(200);
      const ended = await waitFor(async () => {
        const e = (await s.get(`/v1/site/${siteId}/enrollments?status=UNENROLLED`)).body.find((x: { id: string }) => x.id === charger.id);
        return e ?? undefined;
      }, { what: 'the enrollment left with no device ending' });
      expectEnrollment(ended, { status: 'UNENROLLED', device_ids: [], status_reason: expect.stringMatching(/device/i), unenrolled_at: expect.any(String) });
      expect(ids(await s.get(`/v1/site/${siteId}/enrollments`))).toEqual([batteries.id]);

      // Inside the capacity program's 12-month commitment too: the device is gone, so is the enrollment.
      await waitFor(async () => (await t.utility.get(`/v1/enrollments/${batteries.id}`)).body.status === 'ACTIVE', { what: 'sandbox approval' });
      expect((await s.delete(`/v1/site/${siteId}/device/${b2}`)).status).toBe(200);
      await waitFor(async () => (await t.utility.get(`/v1/enrollments/${batteries.id}`)).body.status === 'UNENROLLED', { what: 'the last battery ending its enrollment' });
      expect((await s.get(`/v1/site/${siteId}/enrollments`)).body).toEqual([]);
    });
  });

  describe('POST /v1/sessions for an existing site', () => {
    it('applies the site fields it carries and adds the devices not yet known; known ones stay as they are', async () => {
      const siteId = uid('site');
      const [b1, b2] = [uid('b'), uid('b')];
      await commission(t, { id: siteId, zip_code: '88801' }, [battery(siteId, b1)]);
      const r = await t.api.post('/v1/sessions', {
        site: { id: siteId, city: 'Reno', email: 'ada@example.com' },
        devices: [battery(siteId, b1, { product_name: 'changed' }), battery(siteId, b2)],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const s = await asSite(t, siteId);
      expect((await s.get(`/v1/site/${siteId}`)).body).toMatchObject({ id: siteId, city: 'Reno', email: 'ada@example.com', zip_code: '88801' });
      const devices = (await s.get(`/v1/site/${siteId}/devices`)).body as { id: string; product_name: string }[];
      expect(devices.map((d) => d.id).sort()).toEqual([b1, b2].sort());
      expect(devices.find((d) => d.id === b1)!.product_name).toBe('PowerWall 9000');

      // site.id alone still only reuses it.
      expect((await t.api.post('/v1/sessions', { site: { id: siteId } })).status).toBe(200);
      expect((await s.get(`/v1/site/${siteId}`)).body.city).toBe('Reno');
    });

    it('a device id the integrator uses at another site: 409 naming it, nothing changed', async () => {
      const [a, b] = [uid('site'), uid('site')];
      const taken = uid('b');
      await commission(t, { id: a }, [battery(a, taken)]);
      await commission(t, { id: b }, []);
      const r = await t.api.post('/v1/sessions', { site: { id: b, city: 'Reno' }, devices: [battery(b, uid('b')), battery(b, taken)] });
      expectError(r, 409, 'CONFLICT');
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'devices/1/id' }]);
      const s = await asSite(t, b);
      expect((await s.get(`/v1/site/${b}`)).body.city).toBeNull();
      expect((await s.get(`/v1/site/${b}/devices`)).body).toEqual([]);
    });

    it('an invalid site field is 400 as in a site update', async () => {
      const siteId = uid('site');
      await commission(t, { id: siteId }, []);
      expectError(await t.api.post('/v1/sessions', { site: { id: siteId, state_code: 'XX' } }), 400, 'VALIDATION_ERROR');
    });
  });

  describe('ZIP codes: five digits or ZIP+4', () => {
    it('a ZIP+4 site matches the programs of its first five digits', async () => {
      const siteId = uid('site');
      const body = await commission(t, { id: siteId, zip_code: '88801-1234' }, [battery(siteId, uid('b'))]);
      expect(body.programs.map((p: { id: string }) => p.id).sort()).toEqual([Sandbox.batteryAutoEnroll, Sandbox.batteryCapacity].sort());
      const s = await asSite(t, siteId);
      expect((await s.get(`/v1/site/${siteId}`)).body.zip_code).toBe('88801-1234');
      expect((await s.get(`/v1/site/${siteId}/programs`)).body.map((p: { id: string }) => p.id).sort()).toEqual([Sandbox.batteryAutoEnroll, Sandbox.batteryCapacity].sort());
      expect((await s.get(`/v1/site/${siteId}/programs?zip_code=88802-0001`)).body).toHaveLength(2);
      expect((await s.get(`/v1/site/${siteId}/programs?zip_code=${NO_PROGRAM_ZIP}-0001`)).body).toEqual([]);
      expect((await t.api.get('/v1/programs?zip_code=88800-9999')).body.map((p: { id: string }) => p.id)).toContain(Sandbox.evSmartCharging);

      // The user can enroll: the ZIP+4 is covered.
      await s.patch(`/v1/site/${siteId}`, { ...completeSite, zip_code: '88801-1234' });
      const b = uid('b');
      expect((await s.post(`/v1/site/${siteId}/devices`, battery(siteId, b))).status).toBe(200);
      const e = await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: [b] });
      expect(e.status, JSON.stringify(e.body)).toBe(200);
    });

    it.each([['8880'], ['888011'], ['88801-12'], ['88801 1234'], ['abcde'], ['88801-']])('%s: 400 wherever a zip code is accepted', async (zip) => {
      const siteId = uid('site');
      const r = await t.api.post('/v1/commission', { site: { id: siteId, zip_code: zip }, devices: [], can_auto_enroll: false });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'site/zip_code' }]);
      await commission(t, { id: siteId }, []);
      const s = await asSite(t, siteId);
      expectError(await s.patch(`/v1/site/${siteId}`, { zip_code: zip }), 400, 'VALIDATION_ERROR');
      expectError(await s.get(`/v1/site/${siteId}/programs?zip_code=${encodeURIComponent(zip)}`), 400, 'VALIDATION_ERROR');
      expectError(await t.api.get(`/v1/programs?zip_code=${encodeURIComponent(zip)}`), 400, 'VALIDATION_ERROR');
      expectError(await t.api.post('/v1/sessions', { site: { id: siteId, zip_code: zip } }), 400, 'VALIDATION_ERROR');
      const program = { name: uid('p'), eligible_device_types: ['BATTERY'], zip_codes: ['88801', zip] };
      const created = await t.utility.post('/v1/programs', program);
      expectError(created, 400, 'VALIDATION_ERROR');
      expect(created.body.errors).toEqual([{ message: expect.any(String), path: 'zip_codes/1' }]);
      expectError(await t.utility.patch(`/v1/programs/${Sandbox.batteryAutoEnroll}`, { zip_codes: [zip] }), 400, 'VALIDATION_ERROR');
    });

    it('a utility program covering a ZIP+4 covers its five-digit ZIP code', async () => {
      const zip = `9${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
      const created = await t.utility.post('/v1/programs', { name: uid('p'), eligible_device_types: ['BATTERY'], zip_codes: [`${zip}-1234`, zip] });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.zip_codes).toEqual([zip]);
      await waitFor(async () => (await t.api.get(`/v1/programs?zip_code=${zip}-0000`)).body.some((p: { id: string }) => p.id === created.body.id), { what: 'the program listed' });
    });
  });

  describe('no empty answer hides a missing input', () => {
    it('a site with no zip code and no zip_code parameter: 422 SITE_INFO_INCOMPLETE naming zip_code', async () => {
      const siteId = uid('site');
      await commission(t, { id: siteId }, [battery(siteId, uid('b'))]);
      const s = await asSite(t, siteId);
      const r = await s.get(`/v1/site/${siteId}/programs`);
      expectError(r, 422, 'SITE_INFO_INCOMPLETE');
      expect(r.body.errors).toEqual([{ message: expect.any(String), path: 'zip_code' }]);
      expect(r.body.detail[0].loc).toContain('zip_code');
      expect((await s.get(`/v1/site/${siteId}/programs?zip_code=88801`)).body).toHaveLength(2);
      await s.patch(`/v1/site/${siteId}`, { zip_code: '88802' });
      await waitFor(async () => (await s.get(`/v1/site/${siteId}/programs`)).status === 200, { what: 'the zip code reaching the catalog' });
    });

    it('commissioning with no device lists no program, and a device added later finds them', async () => {
      const siteId = uid('site');
      expect((await commission(t, { id: siteId, zip_code: '88801' }, [])).programs).toEqual([]);
      const s = await asSite(t, siteId);
      expect((await s.post(`/v1/site/${siteId}/devices`, evCharger(siteId, uid('ev')))).status).toBe(200);
      await waitFor(async () => (await s.get(`/v1/site/${siteId}/programs`)).body.some?.((p: { id: string }) => p.id === Sandbox.evSmartCharging), { what: 'the charger reaching the catalog' });
    });
  });

  describe('HTTP manners', () => {
    it('every 401 carries WWW-Authenticate: Bearer, with error="invalid_token" when a token was sent, on every listener', async () => {
      const bare = (await t.api.withToken(undefined).get('/v1/sites'));
      expectError(bare, 401, 'UNAUTHORIZED');
      expect(bare.headers.get('www-authenticate')).toBe('Bearer');
      for (const [client, path] of [[t.api, '/v1/sites'], [t.utility, '/v1/programs']] as [ApiClient, string][]) {
        expect((await client.withToken(undefined).get(path)).headers.get('www-authenticate')).toBe('Bearer');
        for (const token of ['efs_ct_unknown', 'efs_uk_unknown', 'efs_st_forged.sig', 'nonsense']) {
          const r = await client.withToken(token).get(path);
          expectError(r, 401, 'UNAUTHORIZED');
          expect(r.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
        }
        const malformed = await client.withToken(undefined).get(path, { authorization: 'Basic dXNlcjpwYXNz' });
        expect(malformed.status).toBe(401);
        expect(malformed.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const noToken = await t.portal.get('/auth/session_token');
      expectError(noToken, 401, 'UNAUTHORIZED');
      expect(noToken.headers.get('www-authenticate')).toBe('Bearer');
      const badToken = await t.portal.get('/auth/session_token?token=efs_ss_unknown');
      expectError(badToken, 401, 'UNAUTHORIZED');
      expect(badToken.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      const badRedeem = await t.portal.post('/auth/session_token', { token: 'efs_ss_unknown' });
      expectError(badRedeem, 401, 'UNAUTHORIZED');
      expect(badRedeem.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      // Not on other errors.
      expect((await t.api.get('/v1/site/none/programs')).headers.get('www-authenticate')).toBeNull();
    });

    it('an invalid utility transition is told with the API\'s words', async () => {
      const siteId = uid('site');
      const b = uid('b');
      await commission(t, { id: siteId, ...completeSite }, [battery(siteId, b)]);
      const s = await asSite(t, siteId);
      const e = (await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: [b] })).body;
      await waitFor(async () => (await t.utility.get(`/v1/enrollments/${e.id}`)).body.status === 'ACTIVE', { what: 'sandbox approval' });
      for (const [status, reason] of [['NEEDS_ACTION', 'More please'], ['REJECTED', 'No']] as const) {
        const r = await t.utility.patch(`/v1/enrollments/${e.id}`, { status, status_reason: reason });
        expectError(r, 409, 'CONFLICT');
        const text = JSON.stringify(r.body);
        for (const internal of ['REQUEST_ACTION', 'REJECT ', 'APPROVE', 'trigger']) expect(text).not.toContain(internal);
        expect(r.body.errors).toEqual([{ message: `status ${status} is not allowed for an enrollment that is ACTIVE`, path: 'status' }]);
      }
    });
  });
});

describe.runIf(run)('conformance: sandbox settings take effect at every start', () => {
  it('a later start with another SANDBOX_AUTO_APPROVE_DELAY_MS approves with the new delay', async () => {
    const database = await createTestDatabase();
    // First start: an hour, so that nothing would be approved while this test runs.
    const first = await startSystem({ ...testSystemEnv(), DATABASE_URL: database.url, SANDBOX_AUTO_APPROVE_DELAY_MS: '3600000' });
    await first.stop();
    const second = await startSystem({ ...testSystemEnv(), DATABASE_URL: database.url, SANDBOX_AUTO_APPROVE_DELAY_MS: '200' });
    try {
      const api = apiClient(second.urls.public, SANDBOX_CLIENT_TOKEN);
      const siteId = uid('site');
      const b = uid('b');
      const r = await api.post('/v1/commission', { site: fullSite(siteId), devices: [battery(siteId, b)], can_auto_enroll: false });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const s = apiClient(second.urls.public, (await api.post(`/v1/auth/site/${siteId}`)).body.site_access_token);
      // A sync point, not an assertion: the changed program has reached the enrollment service's read model.
      const delay = async () => ((await second.db.knex.withSchema('enrollment').table('programs').where({ id: Sandbox.batteryAutoEnroll }).first('auto_approve_after_ms')) as { auto_approve_after_ms: string } | undefined)?.auto_approve_after_ms;
      await waitFor(async () => Number(await delay()) === 200, { what: 'the new delay announced' });
      const enrolled = await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: [b] });
      expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(200);
      const e = enrolled.body;
      await waitFor(async () => (await s.get(`/v1/site/${siteId}/enrollments`)).body[0]?.status === 'ACTIVE', { what: 'approval after the new delay' });
      expect(e.status).toBe('PENDING');
    } finally {
      await second.stop();
      await database.drop();
    }
  });
});
