/**
 * SQL statements per commission, by statement, across every service: the whole system in this
 * process (`startSystem`, as the tests run it) on a fresh database of the shared Postgres, with
 * the in-process transport or, with `--kafka`, the shared broker under a fresh topic prefix (the
 * consumers then take batches as in distributed mode). Every statement any service sends through
 * `pg` is counted while `--count` commissions (a new site with two batteries, as bench/run.ts
 * sends) are answered, `--concurrency` at a time, and for 3 s after (the read models catching up).
 * A count, not a timing: the load comes from this process, which is fine for counting and why it
 * prints no rate. Statements the pollers send on their own (dispatch's scheduler, the outbox
 * polls) are counted too and shrink per commission as the commissions come faster.
 *
 *   node bench/commissionStatements.ts [--count 300] [--concurrency 32] [--kafka]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startSystem } from '@efs/cli';
import { apiClient, createTestDatabase, testKafkaBrokers, testRegistryUrl } from '@efs/testing';
import { CLIENT_TOKEN, systemEnv } from './systems.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '32' },
    kafka: { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
const concurrency = Number(values.concurrency);

const counts = new Map<string, number>();
let counting = false;
type Query = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;
const query = pg.Client.prototype.query as unknown as Query;
(pg.Client.prototype as unknown as { query: Query }).query = function (config, ...rest) {
  if (counting) {
    const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '?');
    const shape = text.replace(/\s+/g, ' ').replace(/\(\$\d+(, \$\d+)*\)(, \(\$\d+(, \$\d+)*\))*/g, '(…)').replace(/\$\d+(, \$\d+)*/g, '…').slice(0, 110);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return query.call(this, config, ...rest);
};

const database = await createTestDatabase('efs_stmt');
const system = await startSystem({
  ...systemEnv(),
  LOG_LEVEL: 'silent',
  PORT: '0',
  UTILITY_PORT: '0',
  PORTAL_PORT: '0',
  DATABASE_URL: database.url,
  ...(values.kafka ? { KAFKA_BROKERS: testKafkaBrokers(), SCHEMA_REGISTRY_URL: testRegistryUrl(), KAFKA_TOPIC_PREFIX: `stmt${Date.now()}.` } : {}),
});
try {
  const api = apiClient(system.urls.public, CLIENT_TOKEN);
  const battery = (site: string, n: number) => ({
    id: `${site}-battery-${n}`,
    site_id: site,
    type: 'BATTERY',
    manufacturer_name: 'Bench Energy',
    product_name: 'Bench Battery 13',
    serial_number: `SN-${site}-${n}`,
    install_date: '2025-04-01T00:00:00Z',
    attributes: { battery_capacity_wh: 13_500, battery_power_input_w: 5_000, battery_power_output_w: 5_000 },
  });
  const commission = async (site: string) => {
    const r = await api.post('/v1/commission', { site: { id: site, zip_code: '88801', state_code: 'NM' }, devices: [battery(site, 1), battery(site, 2)], can_auto_enroll: false });
    if (r.status !== 200) throw new Error(`commission ${site}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  // Warm-up: first statements of each kind, consumers joined.
  for (let i = 0; i < 20; i++) await commission(`warm-${i}`);
  await new Promise((r) => setTimeout(r, 2000));
  counting = true;
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await commission(`bench-${next++}`);
  }));
  await new Promise((r) => setTimeout(r, 3000));
  counting = false;
  let total = 0;
  console.log(`SQL statements per commission (${count} commissions, ${concurrency} at a time, ${values.kafka ? 'Kafka' : 'in-process'} transport), by statement:`);
  for (const [shape, n] of [...counts.entries()].sort((a, b) => b[1] - a[1])) {
    total += n;
    if (n / count >= 0.005) console.log(`${(n / count).toFixed(2).padStart(7)}  ${shape}`);
  }
  console.log(`${(total / count).toFixed(2).padStart(7)}  in all`);
  console.log(`command: node bench/commissionStatements.ts --count ${count} --concurrency ${concurrency}${values.kafka ? ' --kafka' : ''}`);
} finally {
  await system.stop();
  await database.drop();
}
