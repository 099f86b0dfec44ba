import { startSystem, type System } from '@efs/cli';
import { apiClient, type ApiClient } from './http.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const SANDBOX_CLIENT_TOKEN = 'efs_ct_test_sandbox_client_token_000000000000';
export const SANDBOX_UTILITY_API_KEY = 'efs_uk_test_sandbox_utility_key_0000000000000';

export interface TestSystem {
  system: System;
  database: TestDatabase;
  /** Public API as the sandbox integrator (client token). */
  api: ApiClient;
  /** Utility API as the sandbox utility. */
  utility: ApiClient;
  /** Portal listener, no token. */
  portal: ApiClient;
  urls: System['urls'];
  stop(): Promise<void>;
}

/**
 * The whole service in this process, on a fresh database of the real Postgres server, with the
 * in-process transport unless env sets KAFKA_BROKERS; listeners on free ports.
 */
export async function startTestSystem(env: Record<string, string> = {}): Promise<TestSystem> {
  const database = await createTestDatabase();
  const system = await startSystem({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: database.url,
    PORT: '0',
    UTILITY_PORT: '0',
    PORTAL_PORT: '0',
    SANDBOX_CLIENT_TOKEN,
    SANDBOX_UTILITY_API_KEY,
    SANDBOX_AUTO_APPROVE_DELAY_MS: '300',
    ...env,
  });
  return {
    system,
    database,
    api: apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN),
    utility: apiClient(system.urls.utility, SANDBOX_UTILITY_API_KEY),
    portal: apiClient(system.urls.portal),
    urls: system.urls,
    async stop() {
      await system.stop();
      await database.drop();
    },
  };
}
