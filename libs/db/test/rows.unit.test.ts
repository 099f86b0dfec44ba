import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isUniqueViolation } from '../src/rows.ts';

describe('what a database error says', () => {
  it('tells an unreachable or unavailable database from an error of the statement itself', () => {
    const unavailable = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('too many connections'), { code: '53300' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
      new Error('Connection terminated unexpectedly'),
    ];
    for (const err of unavailable) expect(isDatabaseUnavailable(err), err.message).toBe(true);
    const statement = [
      Object.assign(new Error('duplicate key value'), { code: '23505' }),
      Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      Object.assign(new Error('numeric field overflow'), { code: '22003' }),
      new TypeError('cannot read properties of undefined'),
      null,
      'text',
    ];
    for (const err of statement) expect(isDatabaseUnavailable(err), String(err)).toBe(false);
    expect(isUniqueViolation(statement[0])).toBe(true);
  });
});
