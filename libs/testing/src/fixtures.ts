/** Sample values of the API's shapes, shared by the test suites of every tier. */

/** A site with every Site field of the specification filled in. */
export function fullSite(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    first_name: 'Ada',
    last_name: 'Lovelace',
    company_name: null,
    email: 'ada@example.com',
    state_code: 'CA',
    city: 'Oakland',
    zip_code: '88801',
    street_address: '1 Battery Way',
    street_address2: 'Unit 2',
    service_account_id: 'acct-42',
    ...overrides,
  };
}

/** The error of class `type` that a call throws (fails the test when it throws nothing or something else). */
export function thrownBy<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name} to be thrown`);
}
