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
