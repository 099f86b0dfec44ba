import { afterAll, beforeAll } from 'vitest';
import { startSystem, type System } from '@efs/cli';
import { apiClient, createTestDatabase, DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY, SANDBOX_CLIENT_TOKEN, SANDBOX_UTILITY_API_KEY, type ApiClient, type TestDatabase } from '@efs/testing';


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
  /** Stops the service and starts it again on the same database (new ports: the clients follow). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * What every test system in this process runs with: quiet logs, listeners on free ports, the
 * sandbox credentials, the development key-encryption key, a quick sandbox approval, and every forwarded reply checked against the
 * route's declared responses.
 */
export const testSystemEnv = (): Record<string, string> => ({
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  PORT: '0',
  UTILITY_PORT: '0',
  PORTAL_PORT: '0',
  SANDBOX_CLIENT_TOKEN,
  SANDBOX_UTILITY_API_KEY,
  SIGNING_KEY_ENCRYPTION_KEY: DEVELOPMENT_SIGNING_KEY_ENCRYPTION_KEY,
  SANDBOX_AUTO_APPROVE_DELAY_MS: '300',
  VALIDATE_REPLIES: 'true',
});

/**
 * The whole service in this process, on a fresh database of the real Postgres server, with the
 * in-process transport unless env sets KAFKA_BROKERS; listeners on free ports.
 */
export async function startTestSystem(env: Record<string, string> = {}): Promise<TestSystem> {
  const database = await createTestDatabase();
  const start = () => startSystem({ ...testSystemEnv(), DATABASE_URL: database.url, ...env });
  const clients = (system: System) => ({
    system,
    api: apiClient(system.urls.public, SANDBOX_CLIENT_TOKEN),
    utility: apiClient(system.urls.utility, SANDBOX_UTILITY_API_KEY),
    portal: apiClient(system.urls.portal),
    urls: system.urls,
  });
  const t: TestSystem = {
    ...clients(await start()),
    database,
    // Through `this`: useTestSystem hands out a copy of this object.
    async restart() {
      await this.system.stop();
      Object.assign(this, clients(await start()));
    },
    async stop() {
      await this.system.stop();
      await database.drop();
    },
  };
  return t;
}

/**
 * A test system for the enclosing `describe`: started before its tests (ahead of the block's own
 * beforeAll hooks, which may use it) and stopped after them. The object is filled in when the
 * system has started, so read it in tests and hooks, not while the block is being declared.
 */
export function useTestSystem(env: Record<string, string> = {}): TestSystem {
  const t = {} as TestSystem;
  beforeAll(async () => {
    Object.assign(t, await startTestSystem(env));
  });
  afterAll(async () => {
    await t.stop?.();
  });
  return t;
}
