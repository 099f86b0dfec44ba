import { describe, expect, it } from 'vitest';
import { tierAvailable, waitFor, type ApiClient } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { addMonths } from '../services/enrollment/src/domain/lifecycle.ts';
import { CAPACITY_TERMS, Sandbox, asSite, battery, capacityEnrollment, commission, completeSite, evCharger, expectEnrollment, expectError, uid } from './enrollmentHelpers.ts';

const run = await tierAvailable('postgres');

const getEnrollment = async (s: ApiClient, siteId: string, id: string) => ((await s.get(`/v1/site/${siteId}/enrollments`)).body as any[]).find((e) => e.id === id);

/** The end user's enrollment flow over HTTP, with the sandbox programs approving after 300 ms. */
describe.runIf(run)('enrollments over HTTP: the typical flow with sandbox approval', () => {
  const t = useTestSystem();

  it('commission, read programs, enroll (incomplete site, terms, form), PENDING → ACTIVE, unenroll', async () => {
    const siteId = uid('site');
    const commissioned = await commission(t, { id: siteId, zip_code: '88801' }, [battery(siteId, 'b1'), battery(siteId, 'b2'), evCharger(siteId, 'ev1')]);
    expect(commissioned.enrollment).toBeUndefined();
    const s = await asSite(t, siteId);

    const none = await s.get(`/v1/site/${siteId}/enrollments`);
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);

    const programs = await s.get(`/v1/site/${siteId}/programs`);
    expect(programs.status).toBe(200);
    const capacity = programs.body.find((p: { id: string }) => p.id === Sandbox.batteryCapacity);
    expect(capacity).toMatchObject({ terms_and_conditions_version: CAPACITY_TERMS, minimum_commitment_months: 12, enrollment_form: [{ name: 'utility_account_number', type: 'string' }] });

    // The site information is incomplete: 422 listing the missing fields.
    const incomplete = await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(['b1']));
    expectError(incomplete, 422, 'SITE_INFO_INCOMPLETE');
    expect(incomplete.body.errors.map((e: { path: string }) => e.path)).toEqual(['first_name', 'last_name', 'email', 'street_address', 'city', 'state_code']);

    const patched = await s.patch(`/v1/site/${siteId}`, completeSite);
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    // Terms not agreed, or an older version: 422.
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryCapacity, device_ids: ['b1'] }), 422, 'TERMS_NOT_ACCEPTED');
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, { ...capacityEnrollment(['b1']), terms_and_conditions_version: '2025-01-01' }), 422, 'TERMS_NOT_ACCEPTED');
    // The form unanswered: 400 naming the field.
    const noForm = await s.post(`/v1/site/${siteId}/enrollments`, { ...capacityEnrollment(['b1']), program_specific_attributes: [] });
    expectError(noForm, 400, 'VALIDATION_ERROR');
    expect(noForm.body.errors).toEqual([{ message: 'Utility account number (utility_account_number) is required', path: 'program_specific_attributes/utility_account_number' }]);
    // Not eligible (EV program, battery), unknown device, unknown program, malformed body.
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.evSmartCharging, device_ids: ['b1'] }), 422, 'NOT_ELIGIBLE');
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(['nope'])), 404, 'NOT_FOUND');
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, { ...capacityEnrollment(['b1']), program_id: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
    const malformed = await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryCapacity, device_ids: [] });
    expectError(malformed, 400, 'VALIDATION_ERROR');
    expect(malformed.body.errors[0].path).toBe('device_ids');

    // With terms and form answers: PENDING, USER_ACTION.
    const withTerms = await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(['b1']));
    expect(withTerms.status, JSON.stringify(withTerms.body)).toBe(200);
    expectEnrollment(withTerms.body, {
      site_id: siteId,
      program_id: Sandbox.batteryCapacity,
      device_ids: ['b1'],
      enroll_method: 'USER_ACTION',
      status: 'PENDING',
      status_reason: null,
      enrolled_at: null,
      unenrolled_at: null,
      program_specific_attributes: [{ name: 'utility_account_number', value: 'UA-123' }],
      has_agreed_to_terms_and_conditions: true,
      terms_and_conditions_version: CAPACITY_TERMS,
    });
    // Without terms or form (the program has none).
    const plain = await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: ['b2'] });
    expect(plain.status).toBe(200);
    expectEnrollment(plain.body, { status: 'PENDING', enroll_method: 'USER_ACTION', program_specific_attributes: [], has_agreed_to_terms_and_conditions: null, terms_and_conditions_version: null });
    // The same device again in the same program: 409.
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment(['b1'])), 409, 'CONFLICT');

    // The sandbox approves both after its delay.
    const active = await waitFor(async () => {
      const e = await getEnrollment(s, siteId, withTerms.body.id);
      return e?.status === 'ACTIVE' ? e : undefined;
    }, { what: 'sandbox approval' });
    expect(Date.parse(active.enrolled_at)).toBeGreaterThan(Date.now() - 60_000);
    await waitFor(async () => (await getEnrollment(s, siteId, plain.body.id))?.status === 'ACTIVE', { what: 'sandbox approval' });
    const list = await s.get(`/v1/site/${siteId}/enrollments`);
    expect(list.body.map((e: { id: string }) => e.id)).toEqual([withTerms.body.id, plain.body.id]);
    for (const e of list.body) expectEnrollment(e, { status: 'ACTIVE' });

    // Inside the 12-month commitment: 409 naming the first allowed date.
    const inside = await s.delete(`/v1/site/${siteId}/enrollment/${withTerms.body.id}`);
    expectError(inside, 409, 'MINIMUM_COMMITMENT_NOT_MET');
    expect(inside.body.message).toContain(addMonths(new Date(active.enrolled_at), 12).toISOString());
    expect((await getEnrollment(s, siteId, withTerms.body.id)).status).toBe('ACTIVE');

    // No commitment: UNENROLLED with unenrolled_at; deleting again (alias path) answers it unchanged.
    const ended = await s.delete(`/v1/site/${siteId}/enrollment/${plain.body.id}`);
    expect(ended.status).toBe(200);
    expectEnrollment(ended.body, { id: plain.body.id, status: 'UNENROLLED', enrolled_at: expect.any(String), unenrolled_at: expect.any(String) });
    expect(Date.parse(ended.body.unenrolled_at)).toBeGreaterThanOrEqual(Date.parse(ended.body.enrolled_at));
    const again = await s.delete(`/v1/site/${siteId}/enrollments/${plain.body.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(ended.body);
    expectError(await s.delete(`/v1/site/${siteId}/enrollment/00000000-0000-4000-8000-000000000000`), 404, 'NOT_FOUND');
  });

  it('auto-enrollment at commissioning: PENDING AUTO_ENROLL in the response, then approved', async () => {
    const siteId = uid('auto');
    const [b1, ev1] = [uid('b'), uid('ev')];
    const body = await commission(t, { id: siteId, ...completeSite }, [battery(siteId, b1), evCharger(siteId, ev1)], true);
    expectEnrollment(body.enrollment, { site_id: siteId, program_id: Sandbox.batteryAutoEnroll, device_ids: [b1], enroll_method: 'AUTO_ENROLL', status: 'PENDING' });
    const s = await asSite(t, siteId);
    const listed = await s.get(`/v1/site/${siteId}/enrollments`);
    expect(listed.body).toEqual([body.enrollment]);
    await waitFor(async () => (await getEnrollment(s, siteId, body.enrollment.id))?.status === 'ACTIVE', { what: 'sandbox approval' });
    // The user cannot enroll the device in the same program a second time.
    expectError(await s.post(`/v1/site/${siteId}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: [b1] }), 409, 'CONFLICT');
  });

  it('50 concurrent identical enroll requests leave exactly one enrollment', async () => {
    const siteId = uid('race');
    const b1 = uid('b');
    await commission(t, { id: siteId, ...completeSite }, [battery(siteId, b1)]);
    const s = await asSite(t, siteId);
    const results = await Promise.all(Array.from({ length: 50 }, () => s.post(`/v1/site/${siteId}/enrollments`, capacityEnrollment([b1]))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(49);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe('CONFLICT');
    const list = await s.get(`/v1/site/${siteId}/enrollments`);
    expect(list.body).toHaveLength(1);
    expect(list.body[0].id).toBe(results.find((r) => r.status === 200)!.body.id);
  });

  it('tokens: a client token is refused, another site\'s token is 403, no token 401', async () => {
    const a = uid('a');
    const b = uid('b');
    await commission(t, { id: a, ...completeSite }, [battery(a, uid('b'))]);
    await commission(t, { id: b, ...completeSite }, [battery(b, uid('b'))]);
    const sa = await asSite(t, a);
    expectError(await t.api.get(`/v1/site/${a}/enrollments`), 403, 'FORBIDDEN');
    expectError(await sa.get(`/v1/site/${b}/enrollments`), 403, 'FORBIDDEN');
    expectError(await sa.post(`/v1/site/${b}/enrollments`, { program_id: Sandbox.batteryAutoEnroll, device_ids: ['x'] }), 403, 'FORBIDDEN');
    expectError(await t.api.withToken(undefined).get(`/v1/site/${a}/enrollments`), 401, 'UNAUTHORIZED');
    expectError(await t.utility.get(`/v1/site/${a}/enrollments`), 404, 'NOT_FOUND');
  });
});

/** The auto-approver sleeps until the next approval it knows of, woken by enrollment's own commits: no poll needed. */
describe.runIf(run)('sandbox approval at its time, with the poll ten minutes away', () => {
  const t = useTestSystem({ ENROLLMENT_AUTO_APPROVE_POLL_MS: '600000' });

  it('approves an auto-enrollment once its 300 ms delay is over, not before', async () => {
    const siteId = uid('timed');
    const b1 = uid('b');
    const sent = Date.now();
    const body = await commission(t, { id: siteId, ...completeSite }, [battery(siteId, b1)], true);
    expectEnrollment(body.enrollment, { site_id: siteId, program_id: Sandbox.batteryAutoEnroll, status: 'PENDING' });
    const s = await asSite(t, siteId);
    await waitFor(async () => (await getEnrollment(s, siteId, body.enrollment.id))?.status === 'ACTIVE', { what: 'sandbox approval without a poll', timeoutMs: 10_000, intervalMs: 20 });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(300);
  });
});
