/** The sandbox credentials the test systems register (SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY). */
export const SANDBOX_CLIENT_TOKEN = 'efs_ct_test_sandbox_client_token_000000000000';
export const SANDBOX_UTILITY_API_KEY = 'efs_uk_test_sandbox_utility_key_0000000000000';
/** The development key-encryption key (`make run` uses the same): seals the signing keys in test databases. */
export const DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY = 'dev:ZWZzLWxvY2FsLWRldmVsb3BtZW50LW9ubHkta2V5ISE=';
