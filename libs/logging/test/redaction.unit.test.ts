import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { childWithPlainKeys, createLogger } from '@efs/logging';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ name: 'test', destination }), lines };
}

describe('redaction', () => {
  it('hides credentials at the top level, under any key, and in request headers', () => {
    const { logger, lines } = capture();
    logger.info({ token: 'efs_ct_a', body: { token: 'efs_ct_b', site_access_token: 's' }, req: { headers: { authorization: 'Bearer x', cookie: 'c' } }, connectionString: 'postgres://u:p@h/db' }, 'line');
    expect(lines[0]).toMatchObject({ token: '[redacted]', body: { token: '[redacted]', site_access_token: '[redacted]' }, req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } }, connectionString: '[redacted]' });
  });

  it('writes strings, numbers and booleans as they are, in bindings and fields, except under a censored key', () => {
    const { logger, lines } = capture();
    logger.child({ reqId: 'r"1', token: 'efs_ct_a' }).info({ responseTime: 0.25, ok: true, trace_id: 'abc', req: 'GET /', secret: 's', n: null }, 'line');
    expect(lines[0]).toMatchObject({ reqId: 'r"1', token: '[redacted]', responseTime: 0.25, ok: true, trace_id: 'abc', req: 'GET /', secret: '[redacted]', n: null });
  });

  it('writes the plain keys of a child as its serializers make them, and redacts every other key as before', () => {
    const { logger, lines } = capture();
    const child = childWithPlainKeys(logger, { listener: 'public' }, { serializers: { req: (r: { method: string }) => ({ method: r.method }) } }, ['req']).child({ reqId: 'r1' });
    child.info({ req: { method: 'GET', headers: { authorization: 'Bearer x' } }, body: { token: 'efs_ct_b' }, secret: 's' }, 'line');
    expect(lines[0]).toMatchObject({ listener: 'public', reqId: 'r1', req: { method: 'GET' }, body: { token: '[redacted]' }, secret: '[redacted]' });
    expect(lines[0]!.req).toEqual({ method: 'GET' });
    // A plain key's value is written as it is: its serializer alone decides what it shows.
    child.info({ req: { method: 'token' }, res: { token: 'efs_ct_c' } }, 'line');
    expect(lines[1]).toMatchObject({ req: { method: 'token' }, res: { token: '[redacted]' } });
    const plainRes = childWithPlainKeys(logger, {}, {}, ['res']);
    plainRes.info({ res: { token: 'shown' } }, 'line');
    expect(lines[2]).toMatchObject({ res: { token: 'shown' } });
    // The parent is unchanged.
    logger.info({ req: { headers: { authorization: 'Bearer x' } } }, 'parent');
    expect(lines[3]).toMatchObject({ req: { headers: { authorization: '[redacted]' } } });
  });
});

describe('timestamps', () => {
  it('writes the time of each line as pino does (ISO 8601 in UTC, milliseconds), following the clock', async () => {
    const { logger, lines } = capture();
    const before = Date.now();
    logger.info('one');
    logger.info('two');
    await new Promise((r) => setTimeout(r, 5));
    logger.info('three');
    const after = Date.now();
    for (const l of lines) {
      expect(l.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const t = Date.parse(l.time as string);
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThanOrEqual(after);
    }
    expect(Date.parse(lines[2]!.time as string)).toBeGreaterThan(Date.parse(lines[0]!.time as string));
  });
});
