import { describe, expect, it } from 'vitest';
import { tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { Sandbox, asSite, battery, capacityEnrollment, commission, completeSite, expectEnrollment, expectError, uid } from './enrollmentHelpers.ts';

const run = await tierAvailable('postgres');

/**
 * The utility's side over HTTP. Sandbox auto-approval is pushed an hour out, so that every
 * decision here is the utility's own (and a PENDING enrollment stays PENDING while tested).
 */
describe.runIf(run)('enrollments over HTTP: the utility decides', () => {
  const t = useTestSystem({ SANDBOX_AUTO_APPROVE_DELAY_MS: '3600000' });

  async function siteWithBatteries(n: number): Promise<{ siteId: string; devices: string[]; s: ApiClient }> {
    const siteId = uid('site');
    const devices = Array.from({ length: n }, () => uid('b'));
    await commission(t, { id: siteId, ...completeSite }, devices.map((d) => battery(siteId, d)));
    return { siteId, devices, s: await asSite(t, siteId) };
  }
  const mine = async (s: ApiClient, siteId: string, id: string) => ((await s.get(`/v1/site/${siteId}/enrollments`)).body as any[]).find((e) => e.id === id);

  it('cancel a PENDING enrollment: UNENROLLED with unenrolled_at, devices free again', async () => {
    const { siteId, devices, s } = await siteWithBatteries(1);
    const e = (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(devices))).body;
    expect(e.status).toBe('PENDING');
    const canceled = await s.delete(`/v1/site/${siteId}/enrollments/${e.id}`);
    expect(canceled.status).toBe(200);
    expectEnrollment(canceled.body, { id: e.id, status: 'UNENROLLED', enrolled_at: null, status_reason: 'Canceled by the user' });
    expect(Date.parse(canceled.body.unenrolled_at)).toBeGreaterThan(Date.now() - 60_000);
    const utilityView = await t.utility.get(`/v1/enrollments/${e.id}`);
    expect(utilityView.body).toMatchObject({ status: 'UNENROLLED', unenrolled_at: canceled.body.unenrolled_at });
    expectError(await t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'ACTIVE' }), 409, 'CONFLICT');
    expect((await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(devices))).status).toBe(200);
  });

  it('approve, reject, ask for more (back to PENDING when the site is updated), end', async () => {
    const { siteId, devices, s } = await siteWithBatteries(3);
    const [a, b, c] = await Promise.all(devices.map(async (d) => (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment([d]))).body));

    const pending = await t.utility.get(`/v1/enrollments?program_id=${Sandbox.batteryCapacity}&status=PENDING`);
    expect(pending.status).toBe(200);
    expect(pending.body.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
    for (const e of pending.body) expect(e).toMatchObject({ status: 'PENDING', program_id: Sandbox.batteryCapacity, group_ids: [] });

    const approved = await t.utility.patch(`/v1/enrollments/${a.id}`, { status: 'ACTIVE' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: a.id, status: 'ACTIVE', enrolled_at: expect.any(String) });
    expect(await mine(s, siteId, a.id)).toMatchObject({ status: 'ACTIVE', enrolled_at: approved.body.enrolled_at });
    // Approving again changes nothing; the user is inside the commitment.
    expect((await t.utility.patch(`/v1/enrollments/${a.id}`, { status: 'ACTIVE' })).body.enrolled_at).toBe(approved.body.enrolled_at);
    expectError(await s.delete(`/v1/site/${siteId}/enrollment/${a.id}`), 409, 'MINIMUM_COMMITMENT_NOT_MET');
    // The utility may end it any time.
    const ended = await t.utility.patch(`/v1/enrollments/${a.id}`, { status: 'UNENROLLED', status_reason: 'Moved out of the service territory' });
    expect(ended.body).toMatchObject({ status: 'UNENROLLED', status_reason: 'Moved out of the service territory', unenrolled_at: expect.any(String) });

    expectError(await t.utility.patch(`/v1/enrollments/${b.id}`, { status: 'REJECTED' }), 400, 'VALIDATION_ERROR');
    const rejected = await t.utility.patch(`/v1/enrollments/${b.id}`, { status: 'REJECTED', status_reason: 'Not a customer' });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', status_reason: 'Not a customer' });
    const userSees = await s.delete(`/v1/site/${siteId}/enrollment/${b.id}`);
    expect(userSees.status).toBe(200);
    expectEnrollment(userSees.body, { status: 'REJECTED', status_reason: 'Not a customer', unenrolled_at: null });

    const needs = await t.utility.patch(`/v1/enrollments/${c.id}`, { status: 'NEEDS_ACTION', status_reason: 'Please confirm your street address' });
    expect(needs.body).toMatchObject({ status: 'NEEDS_ACTION', status_reason: 'Please confirm your street address' });
    expect(await mine(s, siteId, c.id)).toMatchObject({ status: 'NEEDS_ACTION', status_reason: 'Please confirm your street address' });
    expect((await s.patch(`/v1/site/${siteId}`, { street_address: '2 Battery Way' })).status).toBe(200);
    const back = await waitFor(async () => {
      const e = await mine(s, siteId, c.id);
      return e.status === 'PENDING' ? e : undefined;
    }, { what: 'NEEDS_ACTION back to PENDING' });
    expect(back).toMatchObject({ status: 'PENDING', status_reason: null });
  });

  it('a NEEDS_ACTION enrollment also goes back to PENDING on a supplement', async () => {
    const { siteId, devices, s } = await siteWithBatteries(1);
    const e = (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(devices))).body;
    await t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'NEEDS_ACTION', status_reason: 'Send your meter id' });
    const sup = await t.api.post('/v1/supplements', { site_id: siteId, data: { meter_id: 'M-77' } });
    expect(sup.status, JSON.stringify(sup.body)).toBe(200);
    await waitFor(async () => (await mine(s, siteId, e.id)).status === 'PENDING', { what: 'NEEDS_ACTION back to PENDING' });
  });

  it("another utility's enrollments and programs are unknown; bad filters are 400", async () => {
    expectError(await t.utility.get('/v1/enrollments/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await t.utility.get('/v1/enrollments?program_id=00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await t.utility.get('/v1/enrollments?status=MAYBE'), 400, 'VALIDATION_ERROR');
    expectError(await t.utility.patch('/v1/enrollments/00000000-0000-4000-8000-000000000000', { status: 'DONE' }), 400, 'VALIDATION_ERROR');
    expectError(await t.utility.get('/v1/programs/00000000-0000-4000-8000-000000000000/groups'), 404, 'NOT_FOUND');
    expectError(await t.api.get('/v1/enrollments'), 404, 'NOT_FOUND');
  });

  it('groups: create, rename, list, assign by PATCH, delete (members leave it)', async () => {
    const base = `/v1/programs/${Sandbox.batteryCapacity}/groups`;
    const north = await t.utility.post(base, { id: 'north', name: 'North' });
    expect(north.status).toBe(200);
    expect(north.body).toMatchObject({ id: 'north', program_id: Sandbox.batteryCapacity, name: 'North', created_at: expect.any(String), updated_at: expect.any(String) });
    expectError(await t.utility.post(base, { id: 'north', name: 'Twice' }), 409, 'CONFLICT');
    expectError(await t.utility.post(base, { name: '' }), 400, 'VALIDATION_ERROR');
    const south = (await t.utility.post(base, { name: 'South' })).body;
    expect((await t.utility.patch(`${base}/north`, { name: 'North zone' })).body.name).toBe('North zone');
    expect((await t.utility.get(base)).body.map((g: { id: string; name: string }) => [g.id, g.name])).toEqual([
      ['north', 'North zone'],
      [south.id, 'South'],
    ]);

    const { siteId, devices, s } = await siteWithBatteries(1);
    const e = (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(devices))).body;
    expectError(await t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'ACTIVE', group_ids: ['north', 'nowhere'] }), 400, 'VALIDATION_ERROR');
    expect((await t.utility.get(`/v1/enrollments/${e.id}`)).body.status).toBe('PENDING');
    const grouped = await t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'ACTIVE', group_ids: ['north', south.id] });
    expect(grouped.body).toMatchObject({ status: 'ACTIVE', group_ids: ['north', south.id].sort() });
    // The end user's view stays the specification's Enrollment.
    expectEnrollment(await mine(s, siteId, e.id), { status: 'ACTIVE' });

    // group_ids alone (no status) regroups without touching the status; a reason without a status, or nothing at all, is refused.
    const regrouped = await t.utility.patch(`/v1/enrollments/${e.id}`, { group_ids: ['north'] });
    expect(regrouped.status, JSON.stringify(regrouped.body)).toBe(200);
    expect(regrouped.body).toMatchObject({ status: 'ACTIVE', group_ids: ['north'], enrolled_at: grouped.body.enrolled_at });
    expectError(await t.utility.patch(`/v1/enrollments/${e.id}`, { status_reason: 'why' }), 400, 'VALIDATION_ERROR');
    expectError(await t.utility.patch(`/v1/enrollments/${e.id}`, {}), 400, 'VALIDATION_ERROR');
    expect((await t.utility.patch(`/v1/enrollments/${e.id}`, { group_ids: ['north', south.id] })).body.group_ids).toEqual(['north', south.id].sort());

    const deleted = await t.utility.delete(`${base}/north`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe('north');
    expectError(await t.utility.delete(`${base}/north`), 404, 'NOT_FOUND');
    expect((await t.utility.get(`/v1/enrollments/${e.id}`)).body.group_ids).toEqual([south.id]);
  });

  it('a DELETE racing an approval ends in one consistent state', async () => {
    const { siteId, devices, s } = await siteWithBatteries(8);
    for (const d of devices) {
      const e = (await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment([d]))).body;
      const [del, approve] = await Promise.all([s.delete(`/v1/site/${siteId}/enrollment/${e.id}`), t.utility.patch(`/v1/enrollments/${e.id}`, { status: 'ACTIVE' })]);
      const final = (await t.utility.get(`/v1/enrollments/${e.id}`)).body;
      if (final.status === 'ACTIVE') {
        expect(approve.status).toBe(200);
        expectError(del, 409, 'MINIMUM_COMMITMENT_NOT_MET');
      } else {
        expect(final).toMatchObject({ status: 'UNENROLLED', enrolled_at: null });
        expect(del.status).toBe(200);
        expectError(approve, 409, 'CONFLICT');
      }
    }
  });
});
