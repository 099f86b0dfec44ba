import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, Errors, NonRetriableError, fromErrorBody, isDependencyUnavailable, isRetriable, toErrorBody } from '@efs/errors';

describe('error catalogue', () => {
  it('a factory makes an AppError with its code, status, default or given message, and the body of the specification', () => {
    const e = Errors.NOT_FOUND('Site s1 not found');
    expect(e).toBeInstanceOf(AppError);
    expect(e.toBody()).toEqual({ code: 'NOT_FOUND', message: 'Site s1 not found', status_code: 404, detail: [], errors: [] });
    expect(Errors.CONFLICT().message).toBe('Conflict');
    expect(Errors.CONFLICT.status).toBe(409);
  });

  it('forField names the field both ways the specification shows', () => {
    expect(Errors.CONFLICT.forField('Device d1 exists already', ['devices', 0, 'id']).toBody()).toEqual({
      code: 'CONFLICT',
      message: 'Device d1 exists already',
      status_code: 409,
      detail: [{ loc: ['body', 'devices', '0', 'id'], msg: 'Device d1 exists already', type: 'conflict' }],
      errors: [{ message: 'Device d1 exists already', path: 'devices/0/id' }],
    });
  });

  it('retriable: 5xx, 408 and 429 are; other 4xx, ZodErrors and NonRetriableErrors are not; unknown errors are', () => {
    expect(Object.values(Errors).filter((f) => f.retriable).map((f) => f.code).sort()).toEqual(['INTERNAL_ERROR', 'RATE_LIMITED', 'REQUEST_TIMEOUT', 'SERVICE_UNAVAILABLE']);
    expect(isRetriable(Errors.SERVICE_UNAVAILABLE())).toBe(true);
    expect(isRetriable(Errors.VALIDATION_ERROR())).toBe(false);
    expect(isRetriable(z.string().safeParse(1).error)).toBe(false);
    expect(isRetriable(new NonRetriableError('bad'))).toBe(false);
    expect(isRetriable(new Error('connection reset'))).toBe(true);
  });

  it('an error body received from another service becomes the same error; unknown codes and errors stay internal', () => {
    const body = Errors.NOT_ELIGIBLE('No', { errors: [{ message: 'x', path: 'device_ids/0' }] }).toBody();
    expect(fromErrorBody(body).toBody()).toEqual(body);
    expect(fromErrorBody({ ...body, code: 'MADE_UP' }).toBody()).toMatchObject({ code: 'INTERNAL_ERROR', status_code: 500 });
    expect(toErrorBody(new Error('secret detail'))).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal error', status_code: 500, detail: [], errors: [] });
  });

  it('a dependency that cannot be reached (socket errors, Postgres going away, no pool connection) is SERVICE_UNAVAILABLE, nothing else is', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const timeout = Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' });
    for (const err of [refused, shutdown, timeout, new Error('update "enrollment"."enrollments" set "status" = $1 - Connection terminated unexpectedly'), new Error('wrapped', { cause: refused }), new AggregateError([refused], 'all addresses')]) {
      expect(isDependencyUnavailable(err), String(err)).toBe(true);
      expect(toErrorBody(err)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status_code: 503 });
    }
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    for (const err of [unique, new Error('boom'), Errors.SERVICE_UNAVAILABLE(), Errors.NOT_FOUND(), 'text']) expect(isDependencyUnavailable(err), String(err)).toBe(false);
    expect(toErrorBody(unique)).toMatchObject({ code: 'INTERNAL_ERROR', status_code: 500 });
  });
});
