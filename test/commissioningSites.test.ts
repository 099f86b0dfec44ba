import { beforeAll, describe, expect, it } from 'vitest';
import { CommissioningOperations } from '@efs/api';
import { SitesTopic, type SiteMessage } from '@efs/contracts';
import { tierAvailable, waitFor } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';
import { ask, asSite, battery, captureTopic, expectError, expectSiteRecord, fullSite, uid } from './commissioningHelpers.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('sites: GET /v1/sites, GET and PATCH /v1/site/{siteId}', () => {
  const t = useTestSystem();
  let sitesSeen: { key: string | null; value: SiteMessage }[];
  beforeAll(async () => {
    sitesSeen = await captureTopic<SiteMessage>(t, SitesTopic);
  });

  const commission = async (site: Record<string, unknown>, devices: unknown[] = []) => {
    const r = await t.api.post('/v1/commission', { site, devices, can_auto_enroll: false });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };

  describe('GET /v1/sites (client token)', () => {
    it('lists the sites oldest first, every field, paginated with skip and limit', async () => {
      const ids = [uid('a'), uid('b'), uid('c')];
      for (const id of ids) await commission(fullSite(id));
      const all = await t.api.get('/v1/sites?limit=1000');
      expect(all.status).toBe(200);
      const mine = all.body.filter((s: { id: string }) => ids.includes(s.id));
      expect(mine.map((s: { id: string }) => s.id)).toEqual(ids);
      for (const s of mine) expectSiteRecord(s, fullSite(s.id));
      // Stable order by created_at, then id.
      const keys = all.body.map((s: { created_at: string; id: string }) => [s.created_at, s.id]);
      expect(keys).toEqual([...keys].sort((x: string[], y: string[]) => (x[0]! === y[0]! ? (x[1]! < y[1]! ? -1 : 1) : x[0]! < y[0]! ? -1 : 1)));
      const n = all.body.length;
      const page = await t.api.get(`/v1/sites?skip=${n - 2}&limit=1`);
      expect(page.body).toEqual([all.body[n - 2]]);
      expect((await t.api.get(`/v1/sites?skip=${n}`)).body).toEqual([]);
      expect((await t.api.get('/v1/sites')).body).toEqual(all.body.slice(0, 100));
    });

    it.each([['limit=0'], ['limit=1001'], ['skip=-1'], ['limit=abc']])('400 for %s', async (q) => {
      const r = await t.api.get(`/v1/sites?${q}`);
      expectError(r, 400, 'VALIDATION_ERROR');
    });

    it("lists only the integrator's own sites", async () => {
      const theirs = uid('theirs');
      const other = { kind: 'CLIENT' as const, integrator_id: uid('other-integrator') };
      expect((await ask(t, CommissioningOperations.commission, other, { body: { site: { id: theirs }, devices: [], can_auto_enroll: false } })).status).toBe(200);
      expect((await t.api.get('/v1/sites?limit=1000')).body.map((s: { id: string }) => s.id)).not.toContain(theirs);
    });

    it('403 for a site token, 401 without a token', async () => {
      const id = uid('site');
      await commission({ id });
      expectError(await (await asSite(t, id)).get('/v1/sites'), 403, 'FORBIDDEN');
      expectError(await t.api.withToken(undefined).get('/v1/sites'), 401, 'UNAUTHORIZED');
    });
  });

  describe('GET /v1/site/{siteId} (site token)', () => {
    it('answers the site with every field and its timestamps', async () => {
      const id = uid('site');
      const site = fullSite(id, { company_name: 'Lovelace Ltd', state_code: 'PR' });
      await commission(site);
      const r = await (await asSite(t, id)).get(`/v1/site/${id}`);
      expect(r.status).toBe(200);
      expectSiteRecord(r.body, site);
      expect(r.body.created_at).toBe(r.body.updated_at);
    });

    it('403 for a client token and for the token of another site', async () => {
      const a = uid('site');
      const b = uid('site');
      await commission({ id: a });
      await commission({ id: b });
      expectError(await t.api.get(`/v1/site/${a}`), 403, 'FORBIDDEN');
      expectError(await (await asSite(t, b)).get(`/v1/site/${a}`), 403, 'FORBIDDEN');
    });

    it('op getSite: 404 for an unknown site and for another integrator\'s site', async () => {
      const id = uid('site');
      await commission({ id });
      const mine = await ask(t, CommissioningOperations.getSite, { kind: 'SYSTEM', integrator_id: 'sandbox-integrator' }, { params: { siteId: id } });
      expect(mine.status).toBe(200);
      expectSiteRecord(mine.body, { id });
      expect((await ask(t, CommissioningOperations.getSite, { kind: 'CLIENT', integrator_id: 'sandbox-integrator' }, { params: { siteId: uid('nope') } })).status).toBe(404);
      const foreign = await ask(t, CommissioningOperations.getSite, { kind: 'CLIENT', integrator_id: uid('other') }, { params: { siteId: id } });
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('NOT_FOUND');
      expect((await ask(t, CommissioningOperations.getSite, { kind: 'UTILITY', utility_id: 'sandbox-utility' }, { params: { siteId: id } })).status).toBe(403);
    });
  });

  describe('PATCH /v1/site/{siteId} and its alias PATCH /v1/sites/{siteId} (site token)', () => {
    it('changes only the given fields, null clears one, updated_at moves and the change is announced', async () => {
      const id = uid('site');
      await commission({ id, first_name: 'Ada', city: 'Oakland' });
      const app = await asSite(t, id);
      const before = (await app.get(`/v1/site/${id}`)).body;
      const patch = { last_name: 'Lovelace', email: 'ada@example.com', state_code: 'NY', zip_code: '88802', street_address: '2 Grid St', city: null };
      const r = await app.patch(`/v1/site/${id}`, patch);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expectSiteRecord(r.body, { id, first_name: 'Ada', ...patch });
      expect(r.body.created_at).toBe(before.created_at);
      expect(new Date(r.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(before.updated_at).getTime());
      expect(r.body.updated_at).not.toBe(before.updated_at);
      expect((await app.get(`/v1/site/${id}`)).body).toEqual(r.body);
      const m = await waitFor(() => sitesSeen.find((x) => x.key === `sandbox-integrator/${id}` && x.value.updated_at === r.body.updated_at), { what: 'site update message' });
      expect(m.value).toMatchObject({ last_name: 'Lovelace', city: null, zip_code: '88802', state_code: 'NY', deleted: false });
    });

    it('the alias path updates the same site', async () => {
      const id = uid('site');
      await commission({ id });
      const app = await asSite(t, id);
      const r = await app.patch(`/v1/sites/${id}`, { company_name: 'Acme Homes', service_account_id: 'acct-9' });
      expect(r.status).toBe(200);
      expect((await app.get(`/v1/site/${id}`)).body).toMatchObject({ company_name: 'Acme Homes', service_account_id: 'acct-9' });
    });

    it('an empty patch changes nothing', async () => {
      const id = uid('site');
      await commission({ id, first_name: 'Ada' });
      const app = await asSite(t, id);
      const before = (await app.get(`/v1/site/${id}`)).body;
      const r = await app.patch(`/v1/site/${id}`, {});
      expect(r.status).toBe(200);
      expect(r.body).toEqual(before);
    });

    it.each([
      ['unknown state_code', { state_code: 'XX' }, 'state_code'],
      ['bad email', { email: 'ada-at-example' }, 'email'],
      ['id (it cannot change)', { id: 'renamed' }, 'id'],
      ['a field of the wrong type', { zip_code: 88801 }, 'zip_code'],
    ])('400 for %s, nothing changed', async (_n, patch, path) => {
      const id = uid('site');
      await commission({ id, email: 'ok@example.com', state_code: 'CA' });
      const app = await asSite(t, id);
      const before = (await app.get(`/v1/site/${id}`)).body;
      const r = await app.patch(`/v1/site/${id}`, { city: 'Changed', ...patch });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      expect((await app.get(`/v1/site/${id}`)).body).toEqual(before);
    });

    it('403 for a client token and for another site\'s token', async () => {
      const a = uid('site');
      const b = uid('site');
      await commission({ id: a });
      await commission({ id: b });
      expectError(await t.api.patch(`/v1/site/${a}`, { city: 'X' }), 403, 'FORBIDDEN');
      expectError(await (await asSite(t, b)).patch(`/v1/sites/${a}`, { city: 'X' }), 403, 'FORBIDDEN');
    });
  });

  describe('op ensureSite (portal sessions)', () => {
    it('commissions an unknown site with its devices, and reuses an existing one by id alone', async () => {
      const id = uid('site');
      const b = battery(id, uid('bat'));
      const principal = { kind: 'CLIENT' as const, integrator_id: 'sandbox-integrator' };
      const created = await ask(t, CommissioningOperations.ensureSite, principal, { body: { site: { id, zip_code: '88801' }, devices: [b] } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.created).toBe(true);
      expectSiteRecord(created.body.site, { id, zip_code: '88801' });
      expect(created.body.devices.map((d: { id: string }) => d.id)).toEqual([b.id]);
      const reused = await ask(t, CommissioningOperations.ensureSite, principal, { body: { site: { id } } });
      expect(reused.status).toBe(200);
      expect(reused.body).toEqual({ ...created.body, created: false });
      const bad = await ask(t, CommissioningOperations.ensureSite, principal, { body: { site: { id: uid('x'), email: 'nope' } } });
      expect(bad.status).toBe(400);
    });
  });
});
