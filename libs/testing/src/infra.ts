import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import pg from 'pg';

/** Where tests find Postgres: TEST_DATABASE_URL, else the machine's server. */
export const testDatabaseUrl = (): string => process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const testKafkaBrokers = (): string => process.env.TEST_KAFKA_BROKERS ?? '127.0.0.1:9092';
export const testRegistryUrl = (): string => process.env.TEST_SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8085/apis/ccompat/v7';
/** Debian's Chromium, driven by playwright-core (never a browser a tool downloads itself). */
export const testChromiumPath = (): string => process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether this run is CI (CI=true), where no tier may skip. */
export const inCi = () => process.env.CI === 'true' || process.env.CI === '1';

async function tcpOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function kafkaAvailable(): Promise<boolean> {
  const [host, port] = testKafkaBrokers().split(',')[0]!.split(':');
  if (!(await tcpOpen(host!, Number(port)))) return false;
  try {
    const r = await fetch(`${testRegistryUrl()}/subjects`, { signal: AbortSignal.timeout(2000) });
    return r.ok;
  } catch {
    return false;
  }
}

/**
 * Whether a test tier can run. Outside CI a missing piece skips the tier with a line saying what
 * to start; in CI nothing is skipped for lack of infrastructure: the missing piece fails the run.
 */
export async function tierAvailable(tier: 'postgres' | 'kafka' | 'browser'): Promise<boolean> {
  const chromium = tier !== 'browser' || existsSync(testChromiumPath());
  const ok = chromium && (tier === 'kafka' ? (await postgresAvailable()) && (await kafkaAvailable()) : await postgresAvailable());
  if (ok) return true;
  const what =
    tier === 'postgres'
      ? `Postgres at ${testDatabaseUrl()}`
      : tier === 'kafka'
        ? `Kafka at ${testKafkaBrokers()} and the schema registry at ${testRegistryUrl()} (and Postgres)`
        : chromium
          ? `Postgres at ${testDatabaseUrl()}`
          : `Chromium at ${testChromiumPath()}`;
  if (inCi()) throw new Error(`CI: ${what} is not reachable; the ${tier} tier cannot be skipped in CI`);
  const how =
    tier === 'browser' && !chromium
      ? 'Install Debian\'s Chromium with `apt-get update && apt-get install -y chromium` (or point TEST_CHROMIUM_PATH at a Chromium binary).'
      : 'Start it with `make infra-up` (Kafka, registry) or point TEST_DATABASE_URL at a Postgres server.';
  console.warn(`SKIPPED ${tier} tier: ${what} is not reachable. ${how}`);
  return false;
}

/** Deletes a test run's topics (all named with its prefix), so runs do not pile partitions onto the broker. */
export async function deleteTopicsWithPrefix(prefix: string): Promise<void> {
  if (!prefix) throw new Error('refusing to delete topics without a prefix');
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ brokers: testKafkaBrokers().split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    // A topic another client is deleting at the same moment (a reply topic at its transport's
    // stop) can be listed and gone by the time it is deleted: list again and retry.
    for (let attempt = 1; ; attempt++) {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (topics.length === 0) return;
      try {
        await admin.deleteTopics({ topics, timeout: 10_000 });
        return;
      } catch (err) {
        if (attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await admin.disconnect();
  }
}

/** A TCP port free right now on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
