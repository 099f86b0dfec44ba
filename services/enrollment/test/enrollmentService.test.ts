import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommissioningOperations, EnrollmentOperations } from '@efs/api';
import type { OperationDef } from '@efs/contracts';
import { operationRouter } from '@efs/messaging';
import { createLogger } from '@efs/logging';
import { tierAvailable } from '@efs/testing';
import { autoEnroll } from '../src/handlers/autoEnroll.ts';
import { onDevices } from '../src/handlers/onDevices.ts';
import { onSites } from '../src/handlers/onSites.ts';
import {
  ENROLLMENT_FIELDS,
  INTEGRATOR,
  SupplementsTopic,
  UTILITY,
  deviceMessage,
  programMessage,
  siteMessage,
  sitePrincipal,
  startHarness,
  systemPrincipal,
  utilityPrincipal,
  waitFor,
  type Harness,
} from './harness.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('enrollment service (real Postgres, in-process transport, fake clock)', () => {
  let h: Harness;
  const capacity = programMessage({
    name: 'Capacity',
    minimum_commitment_months: 12,
    terms_and_conditions_version: '2026-01-01',
    terms_and_conditions_text: '# Terms',
    enrollment_form: [
      { name: 'utility_account_number', label: 'Account', type: 'string', hint: '' },
      { name: 'meter_kw', label: 'Meter', type: 'number', hint: '' },
    ],
  });
  const flex = programMessage({ name: 'Flex', can_auto_enroll: true, auto_approve_after_ms: 5_000 });
  const ev = programMessage({ name: 'EV', eligible_device_types: ['EV_CHARGER'] });
  const foreign = programMessage({ name: 'Other utility', utility_id: 'utility-2' });
  const terms = { has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: '2026-01-01' };
  const answers = [
    { name: 'utility_account_number', value: 'UA-1' },
    { name: 'meter_kw', value: '7' },
  ];

  async function seedSite(siteId: string, devices: string[] = ['b1'], over = {}) {
    await h.publish('site', siteMessage(siteId, over));
    for (const d of devices) await h.publish('device', deviceMessage(siteId, d, d.startsWith('ev') ? { type: 'EV_CHARGER' } : {}));
  }
  const enroll = (siteId: string, body: unknown) => h.call(EnrollmentOperations.createEnrollment, sitePrincipal(siteId), { params: { siteId }, body });
  const patch = (id: string, body: unknown, utility = UTILITY) => h.call(EnrollmentOperations.updateEnrollment, utilityPrincipal(utility), { params: { id }, body });
  const del = (siteId: string, id: string) => h.call(EnrollmentOperations.deleteEnrollment, sitePrincipal(siteId), { params: { siteId, enrollmentId: id } });
  const history = (id: string) => h.service.context.store.history(h.db.knex, id);

  beforeAll(async () => {
    h = await startHarness();
    for (const p of [capacity, flex, ev, foreign]) await h.publish('program', p);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('creates a PENDING USER_ACTION enrollment with every field, its history and its event', async () => {
    await seedSite('s-ok', ['b1', 'b2']);
    const r = await enroll('s-ok', { program_id: capacity.id, device_ids: ['b1', 'b2', 'b1'], program_specific_attributes: [...answers].reverse(), ...terms });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(ENROLLMENT_FIELDS);
    expect(r.body).toMatchObject({
      device_ids: ['b1', 'b2'],
      site_id: 's-ok',
      program_id: capacity.id,
      enroll_method: 'USER_ACTION',
      status: 'PENDING',
      status_reason: null,
      enrolled_at: null,
      unenrolled_at: null,
      program_specific_attributes: answers,
      has_agreed_to_terms_and_conditions: true,
      terms_and_conditions_version: '2026-01-01',
    });
    expect(await history(r.body.id)).toEqual([
      { enrollment_id: r.body.id, from_status: null, to_status: 'PENDING', trigger: 'CREATE', actor: { kind: 'USER', id: 's-ok' }, reason: 'Enrolled by the user', at: new Date(h.clock.now) },
    ]);
    await h.service.outbox.flush();
    await h.idle();
    const event = h.events.find((e) => e.id === r.body.id);
    expect(event).toMatchObject({ ...r.body, integrator_id: INTEGRATOR, utility_id: UTILITY, group_ids: [] });
  });

  it('checks in the order of decisions.md', async () => {
    // Everything wrong at once: the site information is reported first.
    await seedSite('s-order', ['b1', 'ev1'], { email: null, city: null, zip_code: '88803' });
    let r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1', 'ev1', 'nope'] });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'SITE_INFO_INCOMPLETE', status_code: 422, errors: [{ path: 'email' }, { path: 'city' }] });
    expect(h.commissioningCalls).toContain(`${CommissioningOperations.getSite.name} SYSTEM ${INTEGRATOR} s-order`);

    await h.publish('site', siteMessage('s-order', { zip_code: '88803', updated_at: '2026-01-02T00:00:00.000Z' }));
    expect((await enroll('s-order', { program_id: '00000000-0000-4000-8000-00000000dead', device_ids: ['b1'] })).body.code).toBe('NOT_FOUND');
    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1', 'ev1', 'nope'] });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('NOT_ELIGIBLE');
    expect(r.body.errors).toEqual([
      { message: 'The program is not available for zip code 88803', path: 'zip_code' },
      { message: 'Device type EV_CHARGER is not eligible for the program', path: 'device_ids/ev1' },
    ]);

    await h.publish('site', siteMessage('s-order', { updated_at: '2026-01-03T00:00:00.000Z' }));
    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1', 'nope'] });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'NOT_FOUND', errors: [{ path: 'device_ids/nope' }] });

    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1'], program_specific_attributes: [{ name: 'x', value: 'y' }] });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('TERMS_NOT_ACCEPTED');
    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1'], has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: '2025-01-01' });
    expect(r.body.code).toBe('TERMS_NOT_ACCEPTED');

    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: [{ name: 'utility_account_number', value: 'A' }, { name: 'meter_kw', value: 'lots' }] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'program_specific_attributes/meter_kw', message: 'meter_kw must be a number' }] });

    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers });
    expect(r.status).toBe(200);
    r = await enroll('s-order', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 'CONFLICT', status_code: 409, errors: [{ path: 'device_ids/b1' }] });
    // Another program is another matter.
    expect((await enroll('s-order', { program_id: flex.id, device_ids: ['b1'] })).status).toBe(200);
  });

  it('reads through to commissioning when the read model lags, and answers 404 for a site nobody knows', async () => {
    // Commissioning answers in its API shapes (SiteRecord, Device), as the real service does.
    h.commissioning.set(`${INTEGRATOR}/s-lag`, {
      site: { ...siteMessage('s-lag'), integrator_id: undefined, deleted: undefined },
      devices: [{ ...deviceMessage('s-lag', 'b9'), integrator_id: undefined, reserve_percentage: undefined, deleted: undefined, configuration: { reserve_percentage: 0 } }],
    });
    const r = await enroll('s-lag', { program_id: flex.id, device_ids: ['b9'] });
    expect(r.status).toBe(200);
    expect(await h.service.context.readModels.getSite(h.db.knex, INTEGRATOR, 's-lag')).toMatchObject({ id: 's-lag', email: 'ada@example.com' });
    expect(h.commissioningCalls.filter((c) => c.endsWith(' s-lag'))).toEqual([`${CommissioningOperations.getSite.name} SYSTEM ${INTEGRATOR} s-lag`, `${CommissioningOperations.listDevices.name} SYSTEM ${INTEGRATOR} s-lag`]);
    // The topic's (older or equal) copy arriving afterwards changes nothing.
    await h.publish('site', siteMessage('s-lag', { email: null, updated_at: '2025-12-31T00:00:00.000Z' }));
    expect((await h.service.context.readModels.getSite(h.db.knex, INTEGRATOR, 's-lag'))?.email).toBe('ada@example.com');

    const missing = await enroll('s-unknown', { program_id: flex.id, device_ids: ['b1'] });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'NOT_FOUND', message: 'Site s-unknown not found' });
  });

  it("another integrator's site with the same id is another site; a site token for another site is refused", async () => {
    await seedSite('s-shared');
    const other = await h.call(EnrollmentOperations.createEnrollment, sitePrincipal('s-shared', 'integrator-b'), { params: { siteId: 's-shared' }, body: { program_id: flex.id, device_ids: ['b1'] } });
    expect(other.status).toBe(404);
    const wrong = await h.call(EnrollmentOperations.createEnrollment, sitePrincipal('s-elsewhere'), { params: { siteId: 's-shared' }, body: { program_id: flex.id, device_ids: ['b1'] } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('FORBIDDEN');
  });

  it('unenrolling: cancel PENDING; ACTIVE inside the minimum commitment is 409 naming the date, after it UNENROLLED', async () => {
    await seedSite('s-commit', ['b1', 'b2']);
    const a = (await enroll('s-commit', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).body;
    const b = (await enroll('s-commit', { program_id: capacity.id, device_ids: ['b2'], ...terms, program_specific_attributes: answers })).body;

    const canceled = await del('s-commit', b.id);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ id: b.id, status: 'UNENROLLED', unenrolled_at: new Date(h.clock.now).toISOString(), enrolled_at: null });
    // Deleting again answers it unchanged.
    expect((await del('s-commit', b.id)).body).toEqual(canceled.body);

    const approvedAt = h.clock.now;
    const approved = await patch(a.id, { status: 'ACTIVE' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'ACTIVE', enrolled_at: new Date(approvedAt).toISOString() });

    h.clock.now += 200 * 24 * 3600 * 1000;
    const refused = await del('s-commit', a.id);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'MINIMUM_COMMITMENT_NOT_MET', status_code: 409 });
    expect(refused.body.message).toContain('2027-03-01T00:00:00.000Z');
    expect((await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: a.id } })).body.status).toBe('ACTIVE');

    h.clock.now = Date.parse('2027-03-01T00:00:00.000Z');
    const ended = await del('s-commit', a.id);
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'UNENROLLED', enrolled_at: new Date(approvedAt).toISOString(), unenrolled_at: '2027-03-01T00:00:00.000Z' });
    expect((await history(a.id)).map((x) => `${x.from_status}>${x.to_status} ${x.trigger} ${x.actor.kind}`)).toEqual(['null>PENDING CREATE USER', 'PENDING>ACTIVE APPROVE UTILITY', 'ACTIVE>UNENROLLED UNENROLL USER']);
    // The device is free again.
    expect((await enroll('s-commit', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).status).toBe(200);
    h.clock.now = Date.parse('2026-03-01T00:00:00.000Z');
  });

  it('the utility sees only its own programs: rejects, asks for more, ends; forbidden transitions are 409', async () => {
    await seedSite('s-util', ['b1', 'b2', 'b3']);
    const e1 = (await enroll('s-util', { program_id: ev.id === '' ? '' : capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).body;
    expect((await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal('utility-2'), { params: { id: e1.id } })).status).toBe(404);
    expect((await patch(e1.id, { status: 'ACTIVE' }, 'utility-2')).status).toBe(404);
    expect((await h.call(EnrollmentOperations.listEnrollments, utilityPrincipal(), { query: { program_id: foreign.id } })).status).toBe(404);
    expect((await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: 'not-a-uuid' } })).status).toBe(404);

    const noReason = await patch(e1.id, { status: 'REJECTED' });
    expect(noReason.status).toBe(400);
    expect(noReason.body.errors).toEqual([{ message: 'Required with status REJECTED', path: 'status_reason' }]);
    const rejected = await patch(e1.id, { status: 'REJECTED', status_reason: 'Not in our territory' });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', status_reason: 'Not in our territory', group_ids: [] });
    const again = await patch(e1.id, { status: 'ACTIVE' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CONFLICT');
    expect((await del('s-util', e1.id)).body.status).toBe('REJECTED');

    const e2 = (await enroll('s-util', { program_id: capacity.id, device_ids: ['b2'], ...terms, program_specific_attributes: answers })).body;
    expect((await patch(e2.id, { status: 'UNENROLLED' })).status).toBe(409);
    expect((await patch(e2.id, { status: 'NEEDS_ACTION', status_reason: 'Upload a bill' })).body).toMatchObject({ status: 'NEEDS_ACTION', status_reason: 'Upload a bill' });
    const listed = await h.call(EnrollmentOperations.listEnrollments, utilityPrincipal(), { query: { program_id: capacity.id, status: 'NEEDS_ACTION' } });
    expect(listed.body.map((e: { id: string }) => e.id)).toEqual([e2.id]);
    expect(Object.keys(listed.body[0]).sort()).toEqual([...ENROLLMENT_FIELDS, 'created_at', 'group_ids', 'updated_at'].sort());
    expect((await h.call(EnrollmentOperations.listEnrollments, utilityPrincipal('utility-2'), {})).body).toEqual([]);
  });

  it('NEEDS_ACTION goes back to PENDING on a newer site update or a supplement, not on an older one', async () => {
    await seedSite('s-na', ['b1', 'b2']);
    const e = (await enroll('s-na', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).body;
    await patch(e.id, { status: 'NEEDS_ACTION', status_reason: 'Check your address' });
    const get = async () => (await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: e.id } })).body;

    await h.publish('site', siteMessage('s-na', { city: 'Clovis', updated_at: new Date(h.clock.now - 1000).toISOString() }));
    expect((await get()).status).toBe('NEEDS_ACTION');
    await h.publish('site', siteMessage('s-na', { city: 'Clovis', updated_at: new Date(h.clock.now + 1000).toISOString() }));
    expect(await get()).toMatchObject({ status: 'PENDING', status_reason: null });
    expect((await history(e.id)).at(-1)).toMatchObject({ from_status: 'NEEDS_ACTION', to_status: 'PENDING', trigger: 'INFO_PROVIDED', reason: 'Site information updated' });

    h.clock.now += 5000;
    await patch(e.id, { status: 'NEEDS_ACTION', status_reason: 'Send the meter id' });
    const supplement = { id: 'sup-1', integrator_id: INTEGRATOR, site_id: 's-na', device_id: null, data: { meter_id: '"M-1"' }, created_at: new Date(h.clock.now + 1).toISOString() };
    await h.transport.publish(SupplementsTopic, `${INTEGRATOR}/s-na`, supplement, { messageId: 'sup-msg-1' });
    await h.idle();
    expect((await get()).status).toBe('PENDING');
    // The same supplement delivered again changes nothing, even after a new request for more.
    await patch(e.id, { status: 'NEEDS_ACTION', status_reason: 'Still missing' });
    await h.transport.publish(SupplementsTopic, `${INTEGRATOR}/s-na`, supplement, { messageId: 'sup-msg-1' });
    await h.idle();
    expect((await get()).status).toBe('NEEDS_ACTION');
    h.clock.now = Date.parse('2026-03-01T00:00:00.000Z');
  });

  it('sandbox programs approve PENDING enrollments once their delay is over, each exactly once across replicas', async () => {
    // Approve first what earlier tests left PENDING in the sandbox program (the poller may not have
    // ticked while their clock was ahead), so the race below counts this test's rows only.
    h.clock.now += 10_000;
    await h.service.autoApprover.runOnce();
    await seedSite('s-sand', ['b1', 'b2', 'b3', 'b4', 'b5']);
    const ids: string[] = [];
    for (const d of ['b1', 'b2', 'b3', 'b4', 'b5']) ids.push((await enroll('s-sand', { program_id: flex.id, device_ids: [d] })).body.id);
    // Not due yet.
    expect(await h.service.autoApprover.runOnce()).toBe(0);
    await h.service.autoApprover.stop();
    h.clock.now += 5_000;
    // Two "replicas" racing over the same due rows.
    const [x, y] = await Promise.all([h.service.autoApprover.runOnce(), h.service.autoApprover.runOnce()]);
    expect(x + y).toBe(5);
    for (const id of ids) {
      const e = (await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id } })).body;
      expect(e).toMatchObject({ status: 'ACTIVE', enrolled_at: new Date(h.clock.now).toISOString() });
      expect((await history(id)).filter((r) => r.to_status === 'ACTIVE')).toEqual([
        expect.objectContaining({ trigger: 'AUTO_APPROVE', actor: { kind: 'SYSTEM', id: 'sandbox-auto-approval' } }),
      ]);
    }
    // And the poller does it on its own.
    h.service.autoApprover.start();
    const late = (await enroll('s-sand', { program_id: ev.id, device_ids: ['b1'] })).status;
    expect(late).toBe(422);
    await h.publish('device', deviceMessage('s-sand', 'b6'));
    const e6 = (await enroll('s-sand', { program_id: flex.id, device_ids: ['b6'] })).body;
    h.clock.now += 5_000;
    await waitFor(async () => (await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: e6.id } })).body.status === 'ACTIVE', { what: 'auto-approval' });
    h.clock.now = Date.parse('2026-03-01T00:00:00.000Z');
  });

  it('50 concurrent identical enrollments: exactly one is created, the rest 409', async () => {
    await seedSite('s-race', ['b1']);
    const results = await Promise.all(Array.from({ length: 50 }, () => enroll('s-race', { program_id: flex.id, device_ids: ['b1'] })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.code === 'CONFLICT')).toHaveLength(49);
    const list = await h.call(EnrollmentOperations.listSiteEnrollments, sitePrincipal('s-race'), { params: { siteId: 's-race' } });
    expect(list.body).toHaveLength(1);
  });

  it('a DELETE racing an approval ends in one consistent state', async () => {
    await seedSite('s-dvsa', Array.from({ length: 10 }, (_, i) => `b${i}`));
    for (let i = 0; i < 10; i++) {
      const e = (await enroll('s-dvsa', { program_id: capacity.id, device_ids: [`b${i}`], ...terms, program_specific_attributes: answers })).body;
      const [d, p] = await Promise.all([del('s-dvsa', e.id), patch(e.id, { status: 'ACTIVE' })]);
      const final = (await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: e.id } })).body;
      const steps = (await history(e.id)).map((x) => x.to_status);
      if (final.status === 'ACTIVE') {
        // Approved first: the delete hit the minimum commitment.
        expect(p.status).toBe(200);
        expect(d.body.code).toBe('MINIMUM_COMMITMENT_NOT_MET');
        expect(steps).toEqual(['PENDING', 'ACTIVE']);
      } else {
        expect(final).toMatchObject({ status: 'UNENROLLED', enrolled_at: null });
        expect(d.status).toBe(200);
        expect(p.body.code).toBe('CONFLICT');
        expect(steps).toEqual(['PENDING', 'UNENROLLED']);
      }
    }
  });

  it('auto-enroll: PENDING AUTO_ENROLL for the eligible devices, once per request message, and once per devices', async () => {
    const router = operationRouter(EnrollmentOperations, { autoEnroll: autoEnroll(h.service.context) }, createLogger({ name: 't', level: 'silent' }));
    const body = { site: siteMessage('s-auto'), devices: [deviceMessage('s-auto', 'b1'), deviceMessage('s-auto', 'ev1', { type: 'EV_CHARGER' })], program_id: flex.id };
    const request = { op: EnrollmentOperations.autoEnroll.name, principal: systemPrincipal(), params: {}, query: {}, body: JSON.stringify(body) };
    const meta = { id: 'req-1', topic: 'efs.enrollment.requests', key: 's-auto', headers: {}, partition: 0, offset: '0' };
    const first = await router(request, meta);
    expect(first.status).toBe(200);
    const e = JSON.parse(first.body!);
    expect(Object.keys(e).sort()).toEqual(ENROLLMENT_FIELDS);
    expect(e).toMatchObject({ site_id: 's-auto', program_id: flex.id, device_ids: ['b1'], enroll_method: 'AUTO_ENROLL', status: 'PENDING' });
    // Redelivered: the same enrollment, nothing new.
    const again = await router(request, meta);
    expect(JSON.parse(again.body!).id).toBe(e.id);
    // A new request for the same devices: the same enrollment too.
    expect(JSON.parse((await router(request, { ...meta, id: 'req-2' })).body!).id).toBe(e.id);
    const list = await h.call(EnrollmentOperations.listSiteEnrollments, sitePrincipal('s-auto'), { params: { siteId: 's-auto' } });
    expect(list.body.map((x: { id: string }) => x.id)).toEqual([e.id]);
    // The user enrolling the same device in the same program now conflicts.
    expect((await enroll('s-auto', { program_id: flex.id, device_ids: ['b1'] })).status).toBe(409);

    const refuse = async (over: object, code: string) => {
      const r = await router({ ...request, body: JSON.stringify({ ...body, ...over }) }, { ...meta, id: `req-${code}-${Math.random()}` });
      expect(JSON.parse(r.body!).code).toBe(code);
    };
    await refuse({ program_id: capacity.id }, 'NOT_ELIGIBLE');
    await refuse({ site: siteMessage('s-auto3'), devices: [deviceMessage('s-auto3', 'ev1', { type: 'EV_CHARGER' })] }, 'NOT_ELIGIBLE');
    // Site information is not a condition of auto-enrollment (it is collected later).
    const partial = await router({ ...request, body: JSON.stringify({ ...body, site: siteMessage('s-auto2', { email: null, first_name: null }), devices: [deviceMessage('s-auto2', 'b1')] }) }, { ...meta, id: 'req-partial' });
    expect(partial.status).toBe(200);
    expect(JSON.parse(partial.body!)).toMatchObject({ status: 'PENDING', enroll_method: 'AUTO_ENROLL', site_id: 's-auto2' });
    const asSite = await router({ ...request, principal: sitePrincipal('s-auto') }, { ...meta, id: 'req-x' });
    expect(asSite.status).toBe(403);
  });

  it('groups: created per program, assigned by PATCH, left when deleted (announced)', async () => {
    const gp = (op: OperationDef, params: Record<string, string>, body?: unknown, utility = UTILITY) => h.call(op, utilityPrincipal(utility), { params, body });
    expect((await gp(EnrollmentOperations.createGroup, { programId: foreign.id }, { name: 'x' })).status).toBe(404);
    const north = await gp(EnrollmentOperations.createGroup, { programId: capacity.id }, { id: 'north', name: 'North' });
    expect(north.status).toBe(200);
    expect(north.body).toMatchObject({ id: 'north', program_id: capacity.id, name: 'North' });
    expect((await gp(EnrollmentOperations.createGroup, { programId: capacity.id }, { id: 'north', name: 'Again' })).status).toBe(409);
    h.clock.now += 1;
    const south = (await gp(EnrollmentOperations.createGroup, { programId: capacity.id }, { name: 'South' })).body;
    expect(south.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await gp(EnrollmentOperations.updateGroup, { programId: capacity.id, id: 'north' }, { name: 'North zone' })).body.name).toBe('North zone');
    expect((await gp(EnrollmentOperations.listGroups, { programId: capacity.id })).body.map((g: { id: string }) => g.id)).toEqual(['north', south.id]);

    await seedSite('s-grp', ['b1']);
    const e = (await enroll('s-grp', { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).body;
    const bad = await patch(e.id, { status: 'ACTIVE', group_ids: ['north', 'west'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ message: 'Not a group of the program', path: 'group_ids/1' }]);
    expect((await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: e.id } })).body.status).toBe('PENDING');
    const grouped = await patch(e.id, { status: 'ACTIVE', group_ids: ['north', south.id] });
    expect(grouped.body).toMatchObject({ status: 'ACTIVE', group_ids: ['north', south.id].sort() });

    expect((await gp(EnrollmentOperations.deleteGroup, { programId: capacity.id, id: 'north' })).body.id).toBe('north');
    expect((await gp(EnrollmentOperations.deleteGroup, { programId: capacity.id, id: 'north' })).status).toBe(404);
    expect((await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id: e.id } })).body.group_ids).toEqual([south.id]);
    await h.service.outbox.flush();
    await h.idle();
    expect(h.events.filter((x) => x.id === e.id).at(-1)).toMatchObject({ status: 'ACTIVE', group_ids: [south.id] });
  });

  it('a batch of site and device messages is applied as one by one: newest state kept, each site\'s newest update answers what was asked', async () => {
    await seedSite('s-b1', ['b1']);
    await seedSite('s-b2', ['b1']);
    const [e1, e2] = await Promise.all(['s-b1', 's-b2'].map(async (s) => (await enroll(s, { program_id: capacity.id, device_ids: ['b1'], ...terms, program_specific_attributes: answers })).body));
    for (const e of [e1, e2]) await patch(e.id, { status: 'NEEDS_ACTION', status_reason: 'Check your address' });
    const at = (ms: number) => new Date(h.clock.now + ms).toISOString();
    const delivered = <T>(values: T[]) => values.map((value, i) => ({ value, meta: { id: `batch-${i}`, topic: 't', key: null, headers: {}, partition: 0, offset: String(i) } }));
    // s-b1: an older state, the newer update, then a stale one; s-b2: only an update from before the request, then its removal.
    await onSites(h.service.context)(
      delivered([
        siteMessage('s-b1', { city: 'Old', updated_at: at(-5000) }),
        siteMessage('s-b1', { city: 'Clovis', updated_at: at(1000) }),
        siteMessage('s-b2', { city: 'Early', updated_at: at(-1000) }),
        siteMessage('s-b1', { city: 'Stale', updated_at: at(-2000) }),
        siteMessage('s-b2', { city: 'Gone', deleted: true, updated_at: at(2000) }),
      ]),
    );
    const status = async (id: string) => (await h.call(EnrollmentOperations.getEnrollment, utilityPrincipal(), { params: { id } })).body.status;
    expect([await status(e1.id), await status(e2.id)]).toEqual(['PENDING', 'NEEDS_ACTION']);
    expect((await h.service.context.readModels.getSite(h.db.knex, INTEGRATOR, 's-b1'))?.city).toBe('Clovis');
    expect(await h.service.context.readModels.getSite(h.db.knex, INTEGRATOR, 's-b2')).toBeUndefined();
    await onDevices(h.service.context)(
      delivered([
        deviceMessage('s-b1', 'b2', { type: 'EV_CHARGER', updated_at: at(3000) }),
        deviceMessage('s-b1', 'b2', { updated_at: at(4000) }),
        deviceMessage('s-b1', 'b3', { updated_at: at(4000) }),
        deviceMessage('s-b1', 'b2', { type: 'EV_CHARGER', updated_at: at(3500) }),
      ]),
    );
    const devices = await h.service.context.readModels.getDevices(h.db.knex, INTEGRATOR, 's-b1', ['b2', 'b3']);
    expect(devices.map((d) => `${d.id}:${d.type}`).sort()).toEqual(['b2:BATTERY', 'b3:BATTERY']);
  });

  it('read models ignore older versions and redeliveries', async () => {
    const p = programMessage({ name: 'v2', updated_at: '2026-02-01T00:00:00.000Z' });
    await h.publish('program', p);
    await h.publish('program', { ...p, name: 'v1', updated_at: '2026-01-15T00:00:00.000Z' });
    expect((await h.service.context.readModels.getProgram(h.db.knex, p.id))?.name).toBe('v2');
    await h.publish('device', deviceMessage('s-ok', 'b1', { type: 'EV_CHARGER', updated_at: '2025-01-01T00:00:00.000Z' }));
    expect((await h.service.context.readModels.getDevices(h.db.knex, INTEGRATOR, 's-ok', ['b1']))[0]?.type).toBe('BATTERY');
    await h.publish('device', deviceMessage('s-ok', 'b1', { deleted: true, updated_at: '2026-02-01T00:00:00.000Z' }));
    expect(await h.service.context.readModels.getDevices(h.db.knex, INTEGRATOR, 's-ok', ['b1'])).toEqual([]);
  });
});
