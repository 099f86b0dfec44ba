import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { ReadingsTopic } from '@efs/contracts';
import { parseScrape, testKafkaBrokers, tierAvailable, total, waitFor, matching, type Sample } from '@efs/testing';
import { startDistributedSystem, type DistributedSystem } from '../harness/distributed.ts';

// The consumer series of a back-end process as Prometheus scrapes them, in distributed mode: the
// readings consumer of telemetry-ingest stuck on a locked table (it stops consuming while its
// process lives), then killed and started again.
const run = await tierAvailable('kafka');

describe.runIf(run)('consumer metrics of a service process on Kafka', () => {
  let sys: DistributedSystem;
  beforeAll(async () => {
    sys = await startDistributedSystem();
  }, 300_000);
  afterAll(async () => {
    await sys?.stop();
  });

  const group = { consumer_group: 'efs-telemetry-reading-batches', topic: ReadingsTopic.name };
  const scrape = async (): Promise<Sample[]> => {
    const r = await fetch(sys.metricsUrl('telemetry-ingest'));
    expect(r.status).toBe(200);
    return parseScrape(await r.text());
  };
  const lagOf = (samples: Sample[]) => total(samples, 'efs_messaging_consumer_lag', group);
  const ageOf = (samples: Sample[]) => Math.max(0, ...matching(samples, 'efs_messaging_consumer_lag_age_seconds', group).map((s) => s.value));

  it('shows the lag of a stopped consumer rising, and falling after it restarts; counts records handled and dead-lettered', async () => {
    const site = { id: `lag-site-${Date.now()}`, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', state_code: 'CA', city: 'Oakland', street_address: '1 Battery Way', zip_code: '88801' };
    const deviceId = `${site.id}-bat`;
    const device = { id: deviceId, site_id: site.id, manufacturer_name: 'Acme', product_name: 'PW', serial_number: 'SN-lag', type: 'BATTERY', attributes: { battery_capacity_wh: 13500, battery_power_input_w: 5000, battery_power_output_w: 5000 }, install_date: '2024-05-01T10:00:00Z' };
    expect((await sys.api.post('/v1/commission', { site, devices: [device], can_auto_enroll: true })).status).toBe(200);
    const start = Math.floor(Date.now() / 300_000) * 300_000 - 86_400_000;
    let sent = 0;
    const post = async () => {
      const i = sent++;
      const reading = { device_id: deviceId, start_time: new Date(start + i * 300_000).toISOString(), duration_s: 300, battery_total_energy_discharge_wh: 100 + i };
      return waitFor(async () => {
        const r = await sys.api.post('/v1/telemetry/BATTERY', { telemetry: [reading] });
        return r.status === 200 && r.body.results[0].status === 'OK';
      }, { timeoutMs: 30_000, what: `the gateway to take a reading:\n${sys.logs('gateway')}` });
    };

    // Flowing: a reading is handled, the lag is back to 0.
    await post();
    await waitFor(async () => {
      const s = await scrape();
      return total(s, 'efs_messaging_records_handled_total', group) >= 1 && matching(s, 'efs_messaging_consumer_lag', group).length > 0 && lagOf(s) === 0;
    }, { timeoutMs: 60_000, intervalMs: 1000, what: `the first reading handled:\n${sys.logs('telemetry-ingest')}` });

    // Stopped: the tables its handler writes are locked, so it waits on its first record.
    const lock = new pg.Client({ connectionString: sys.database.url });
    await lock.connect();
    try {
      await lock.query('begin');
      await lock.query('lock table telemetry.readings, telemetry.latest in access exclusive mode');
      for (let i = 0; i < 3; i++) await post();
      const first = await waitFor(async () => {
        const s = await scrape();
        return lagOf(s) >= 3 && s;
      }, { timeoutMs: 30_000, intervalMs: 1000, what: 'the lag of the stopped consumer' });
      for (let i = 0; i < 2; i++) await post();
      const later = await waitFor(async () => {
        const s = await scrape();
        return lagOf(s) >= lagOf(first) + 2 && ageOf(s) > ageOf(first) && s;
      }, { timeoutMs: 30_000, intervalMs: 1000, what: 'the lag and its age rising' });
      expect(ageOf(later)).toBeGreaterThan(0);

      // Restarted: the stuck process is killed and started again, the lock released.
      await sys.kill('telemetry-ingest', 'SIGKILL');
      await lock.query('rollback');
    } finally {
      await lock.end();
    }
    await sys.restart('telemetry-ingest');
    const caughtUp = await waitFor(async () => {
      const s = await scrape();
      return matching(s, 'efs_messaging_consumer_lag', group).length > 0 && lagOf(s) === 0 && total(s, 'efs_messaging_records_handled_total', group) >= 1 && s;
    }, { timeoutMs: 90_000, intervalMs: 1000, what: `the restarted consumer caught up:\n${sys.logs('telemetry-ingest')}` });
    expect(ageOf(caughtUp)).toBe(0);
    expect(total(caughtUp, 'efs_messaging_records_dead_lettered_total', group)).toBe(0);

    // A record it cannot decode goes to the dead-letter topic, and is counted.
    const kafka = new Kafka({ brokers: [testKafkaBrokers()], clientId: 'lag-test', logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: sys.topicPrefix + ReadingsTopic.name, messages: [{ key: deviceId, value: Buffer.from('not avro') }] });
    await producer.disconnect();
    await waitFor(async () => total(await scrape(), 'efs_messaging_records_dead_lettered_total', group) === 1, { timeoutMs: 30_000, intervalMs: 1000, what: 'the dead letter counted' });
  }, 300_000);
});
