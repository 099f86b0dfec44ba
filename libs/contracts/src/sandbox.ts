/**
 * The sandbox tenants of decisions.md: the integrator `SANDBOX_CLIENT_TOKEN` acts for, and the
 * utility that owns the sandbox programs and that `SANDBOX_UTILITY_API_KEY` acts for.
 */
export const SANDBOX_INTEGRATOR_ID = 'sandbox-integrator';
export const SANDBOX_UTILITY_ID = 'sandbox-utility';
