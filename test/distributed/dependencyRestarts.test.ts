/**
 * Every dependency restart survived in distributed mode, under a mixed load (commissions,
 * enrollments, PROGRAM events and their acknowledgements, telemetry, webhook deliveries to a
 * receiver on loopback). The system runs on a Postgres cluster and a schema registry of this
 * file's own, so that stopping them disturbs no other test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tierAvailable, waitFor } from '@efs/testing';
import { BACKEND_SERVICES, startDistributedSystem, type DistributedSystem } from '../harness/distributed.ts';
import { MixedLoad } from '../harness/mixedLoad.ts';
import { postgresBinaries, startOwnPostgres, startOwnRegistry, type OwnPostgres, type OwnRegistry } from '../harness/ownInfrastructure.ts';

const run = (await tierAvailable('kafka')) && postgresBinaries() !== undefined;
const ALL = [...BACKEND_SERVICES, 'gateway'] as const;

describe.runIf(run)('dependency restarts under a mixed load', () => {
  let postgres: OwnPostgres;
  let registry: OwnRegistry;
  let sys: DistributedSystem;
  let load: MixedLoad | undefined;

  beforeAll(async () => {
    [postgres, registry] = await Promise.all([startOwnPostgres(), startOwnRegistry()]);
    sys = await startDistributedSystem(
      {
        SCHEMA_REGISTRY_URL: registry.url,
        REQUEST_TIMEOUT_MS: '3000',
        WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
        WEBHOOK_RETRY_SCHEDULE: '500ms,1s,2s,2s,2s,2s,2s,2s,2s,2s',
        WEBHOOK_POLL_MS: '1000',
        RATE_LIMIT_CLIENT: '1000000',
        RATE_LIMIT_SITE: '1000000',
        RATE_LIMIT_UTILITY: '1000000',
      },
      { postgresAdminUrl: postgres.adminUrl },
    );
  }, 300_000);
  afterAll(async () => {
    await load?.close();
    await sys?.stop().catch(() => undefined);
    await Promise.all([postgres?.destroy(), registry?.destroy()]);
  }, 180_000);

  const pids = () => Object.fromEntries(ALL.map((n) => [n, sys.pid(n)]));
  const logs = () => ALL.map((n) => `--- ${n}\n${sys.logs(n).split('\n').slice(-8).join('\n')}`).join('\n');
  /** The error lines the processes logged lately (what a 500 was), for a failure message. */
  const errorsLogged = () => ALL.flatMap((n) => sys.logs(n, 200).split('\n').filter((l) => l.includes('"level":"error"')).map((l) => `${n}: ${l.slice(0, 1500)}`)).join('\n');

  /** Every write the load had acknowledged is in its owner and every read model (given two minutes to arrive). */
  const expectEverywhere = async (running: MixedLoad) => {
    let lost: string[] = [];
    await waitFor(async () => (lost = await running.lost()).length === 0, { timeoutMs: 120_000, intervalMs: 2000, what: 'every acknowledged write everywhere' }).catch(() => undefined);
    expect(lost, logs()).toEqual([]);
  };
  /** The same, no message delivered twice under different ids; then the load is closed. */
  const expectNothingLost = async (running: MixedLoad) => {
    await expectEverywhere(running);
    expect(running.duplicatesWithNewIds()).toEqual([]);
    await running.close();
  };

  /** Starts a new mixed load and lets it make `rounds` rounds of progress; answers the processes' ids then. */
  const loadRunning = async (rounds = 3) => {
    const started = new MixedLoad(sys);
    load = started;
    await started.prepare();
    const before = pids();
    started.start();
    await started.progress(rounds);
    return { load: started, before };
  };

  it('Postgres stopped and started: 503 with Retry-After meanwhile, every service reconnects by itself, nothing acknowledged is lost', { timeout: 360_000 }, async () => {
    const { load, before } = await loadRunning();

    await postgres.stop();
    const down = Date.now();
    // The outage lasts until the load has been answered 503 a good number of times.
    await waitFor(() => load!.answers.filter((a) => a.at > down && a.status === 503).length >= 100, { timeoutMs: 60_000, intervalMs: 200, what: '503 answers during the outage' }).catch((err: Error) => {
      throw new Error(`${err.message}: ${load!.summary()}`);
    });
    await postgres.start();
    const up = Date.now();
    await load.progress(3, 180_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${load!.summary()}\n${logs()}`);
    });
    await load.stop();

    const during = load.answers.filter((a) => a.at >= down && a.at < up);
    console.log(`during the outage: ${during.length} answers, ${during.filter((a) => a.status === 503).length} of them 503; slowest ${Math.max(...during.map((a) => a.ms))} ms`);
    expect(load.misbehaved(), `${load.summary()}\n${errorsLogged()}`).toEqual([]);
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    expect(pids(), 'no process was restarted').toEqual(before);
    await expectNothingLost(load);
  });

  it('each service process SIGKILLed and started again: nothing acknowledged is lost, duplicates only with the same id', { timeout: 480_000 }, async () => {
    const { load } = await loadRunning(0);
    for (const name of ALL) {
      await load.progress(2, 120_000).catch((err: Error) => {
        throw new Error(`before killing ${name}: ${err.message}\n${load!.summary()}\n${logs()}`);
      });
      await sys.kill(name, 'SIGKILL');
      const killed = Date.now();
      // Down until the load has felt it: a request that needed it answered 503 (or, the gateway, refused).
      await waitFor(() => load!.answers.some((a) => a.at > killed && (a.status === 503 || a.status === 0)), { timeoutMs: 30_000, intervalMs: 100, what: `the load to feel ${name} gone` }).catch(() => undefined);
      await sys.restart(name);
    }
    await load.progress(3, 180_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${load!.summary()}\n${logs()}`);
    });
    await load.stop();

    expect(load.misbehaved({ gatewayDown: true }), `${load.summary()}\n${errorsLogged()}`).toEqual([]);
    await expectEverywhere(load);
    console.log(`after the kills: ${load.summary()}; ${load.receiver.at('integrator').length - load.webhookMessages().size} webhook messages delivered again`);
    expect(load.duplicatesWithNewIds()).toEqual([]);
    await load.close();
  });

  it('the schema registry stopped and started: producers go on from their cached schemas, nothing is lost, no restart needed', { timeout: 360_000 }, async () => {
    const { load, before } = await loadRunning();
    await registry.stop();
    const down = Date.now();
    try {
      // Every process has the schemas of what it writes and reads by now: the load goes on.
      await load.progress(3, 120_000).catch((err: Error) => {
        throw new Error(`while the registry was down: ${err.message}\n${load!.summary()}\n${logs()}`);
      });
    } finally {
      await registry.start();
    }
    const up = Date.now();
    await load.progress(3, 120_000);
    await load.stop();

    const during = load.answers.filter((a) => a.at >= down && a.at < up);
    console.log(`while the registry was down: ${during.length} answers, ${during.filter((a) => a.status === 200).length} of them 200, ${during.filter((a) => a.status === 503).length} 503`);
    expect(load.misbehaved(), `${load.summary()}\n${errorsLogged()}`).toEqual([]);
    expect(pids(), 'no process was restarted').toEqual(before);
    await expectNothingLost(load);
  });
});
