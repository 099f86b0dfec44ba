import { describe, expect, it } from 'vitest';
import type { Principal } from '@efs/contracts';
import { AppError } from '@efs/errors';
import { assertInternal, integratorOf, internalIntegratorOf, siteIntegratorOf, utilityOf } from '../src/index.ts';

const principal = (p: Partial<Principal>): Principal => ({ kind: 'CLIENT', integrator_id: 'i1', utility_id: null, site_id: null, token_id: null, ...p });
const forbidden = (fn: () => unknown) => {
  try {
    fn();
    expect.unreachable();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('FORBIDDEN');
  }
};

describe('access', () => {
  it('integrator principals act for their integrator; utilities and principals without one are refused', () => {
    expect(integratorOf(principal({}))).toBe('i1');
    expect(integratorOf(principal({ kind: 'SYSTEM' }))).toBe('i1');
    forbidden(() => integratorOf(principal({ kind: 'UTILITY', integrator_id: null, utility_id: 'u' })));
    forbidden(() => integratorOf(principal({ integrator_id: null })));
  });

  it('a site or portal-session principal reaches only its own site', () => {
    expect(siteIntegratorOf(principal({ kind: 'SITE', site_id: 's1' }), 's1')).toBe('i1');
    expect(siteIntegratorOf(principal({}), 'any')).toBe('i1');
    for (const kind of ['SITE', 'PORTAL_SESSION'] as const) forbidden(() => siteIntegratorOf(principal({ kind, site_id: 's1' }), 's2'));
    forbidden(() => siteIntegratorOf(principal({ kind: 'UTILITY', integrator_id: null, utility_id: 'u' }), 's1'));
  });

  it('a utility API key acts for its utility; nothing else does', () => {
    expect(utilityOf(principal({ kind: 'UTILITY', integrator_id: null, utility_id: 'u1' }))).toBe('u1');
    for (const kind of ['CLIENT', 'SITE', 'PORTAL_SESSION', 'SYSTEM'] as const) forbidden(() => utilityOf(principal({ kind, utility_id: 'u1' })));
  });

  it('internal operations answer only other services', () => {
    expect(internalIntegratorOf(principal({ kind: 'SYSTEM' }))).toBe('i1');
    expect(() => assertInternal(principal({ kind: 'SYSTEM', integrator_id: null }))).not.toThrow();
    forbidden(() => internalIntegratorOf(principal({ kind: 'SYSTEM', integrator_id: null })));
    for (const kind of ['CLIENT', 'SITE', 'PORTAL_SESSION', 'UTILITY'] as const) forbidden(() => assertInternal(principal({ kind })));
  });
});
