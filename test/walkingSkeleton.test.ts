import { describe, expect, it } from 'vitest';
import { tierAvailable } from '@efs/testing';
import { useTestSystem } from './harness/system.ts';

const run = await tierAvailable('postgres');

describe.runIf(run)('GET /v1/programs through the in-process transport and real Postgres', () => {
  const t = useTestSystem();

  it('lists the sandbox catalog to a client token', async () => {
    const r = await t.api.get('/v1/programs');
    expect(r.status).toBe(200);
    expect(r.body.map((p: { name: string }) => p.name)).toEqual(['Sandbox Battery Flex', 'Sandbox Battery Capacity', 'Sandbox EV Smart Charging']);
    for (const p of r.body) expect(Object.keys(p).sort()).toHaveLength(15);
  });

  it('filters by zip code: 88800–88802 match, 88803 matches nothing', async () => {
    for (const zip of ['88800', '88801', '88802']) expect((await t.api.get(`/v1/programs?zip_code=${zip}`)).body).toHaveLength(3);
    expect((await t.api.get('/v1/programs?zip_code=88803')).body).toEqual([]);
  });

  it('answers 401 with the error body without a token', async () => {
    const r = await t.api.withToken(undefined).get('/v1/programs');
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'UNAUTHORIZED', status_code: 401, detail: [], errors: [] });
  });
});
