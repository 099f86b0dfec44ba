#!/usr/bin/env node
/**
 * efs: the project's command-line tool.
 *
 *   efs run                       every service in one process (the main command)
 *   efs migrate                   run every service's migrations, then exit (a Kubernetes job)
 *   efs client-token create --integrator ID [--name NAME] [--label L]
 *   efs client-token revoke TOKEN_ID
 *   efs utility-key create --utility ID [--name NAME] [--label L]
 *   efs utility-key revoke KEY_ID
 *   efs signing-key rotate        new site-token signing key (keys kept in the auth schema)
 *   efs portal frame-ancestors --integrator ID [ORIGIN ...] [--none]   who may frame its portal
 *   efs portal branding --integrator ID [--logo-url URL] [--primary-button-background #hex] ...
 *   efs tail TOPIC [--from-beginning] [--max N]   print a topic's records, Avro decoded via the registry
 *   efs dlt replay TOPIC [--group G] [--dry-run]  publish TOPIC's dead letters again, where they came from
 *   efs outbox quarantined [--schema S] [--all] [--json]   outbox rows the relays could not publish, with why
 *   efs outbox retry ID... | --all [--schema S]           put them back in the outbox, at their place
 *   efs outbox discard ID... [--schema S]                 give them up (kept on record); their key flows again
 *   efs read-models rebuild       every service re-announces its current state; read models that missed events catch up
 */
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate, onShutdown } from '@efs/runtime';
import { credentialCommand, rotateSigningKeyCommand } from './credentials.ts';
import { portalCommand } from './portal.ts';
import { startSystem } from './allInOne.ts';
import { outboxCommand } from './outbox.ts';
import { tailCommand } from './tail.ts';
import { dltCommand } from './dlt.ts';
import { allModules } from './modules.ts';

const [command, sub, ...rest] = process.argv.slice(2);

async function run(): Promise<void> {
  const system = await startSystem();
  const u = system.urls;
  system.logger.info({ ...u, transport: system.transport.kind, database: system.db.kind }, 'all services started');
  process.stdout.write(
    `\nEnergy Flexibility Enrollment Service is running (${system.transport.kind} transport, ${system.db.kind} database)\n` +
      `  public API   ${u.public}   (OpenAPI: ${u.public}/openapi.json)\n` +
      `  utility API  ${u.utility}\n` +
      `  portal       ${u.portal}\n\n`,
  );
  onShutdown(system.logger, () => system.stop());
}

async function outbox(args: string[]): Promise<number> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-outbox', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, allModules, logger);
  try {
    const schemas = allModules.map((m) => m.schema).filter((s): s is string => s !== null);
    return await outboxCommand(db, schemas, args, { out: (l) => process.stdout.write(`${l}\n`) });
  } finally {
    await db.close();
  }
}

/** `efs read-models rebuild`: the owners' state goes out again through their outboxes (a running relay, or the next start, publishes it). */
async function rebuildReadModels(): Promise<void> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-read-models', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, allModules, logger);
  try {
    for (const m of allModules) {
      if (!m.schema || !m.announceState) continue;
      const n = await db.knex.transaction((trx) => m.announceState!(trx));
      process.stdout.write(`${m.name}: ${n} events re-announced\n`);
    }
    process.stdout.write('a running system publishes them within a second (or the next start does); consumers keep the newest state\n');
  } finally {
    await db.close();
  }
}

async function migrate(): Promise<void> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-migrate', level: common.LOG_LEVEL, bufferMaxBytes: common.LOG_BUFFER_MAX_BYTES });
  const db = await createDatabaseAndMigrate(common, allModules, logger);
  await db.close();
}

try {
  switch (command) {
    case 'run':
      await run();
      break;
    case 'tail':
      await tailCommand(parseConfig(z.object(commonEnv), process.env), [sub, ...rest].filter((a): a is string => a !== undefined));
      break;
    case 'dlt': {
      const common = parseConfig(z.object(commonEnv), process.env);
      if (!common.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set (dead letters exist only with Kafka)');
      const args = [sub, ...rest].filter((a): a is string => a !== undefined);
      process.exitCode = await dltCommand({ brokers: common.KAFKA_BROKERS.split(','), topicPrefix: common.KAFKA_TOPIC_PREFIX }, args, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    }
    case 'migrate':
      await migrate();
      break;
    case 'client-token':
    case 'utility-key':
      process.exitCode = await credentialCommand(command, sub, rest, process.env, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    case 'read-models':
      if (sub !== 'rebuild') throw new Error(`unknown read-models command ${sub ?? ''}`);
      await rebuildReadModels();
      break;
    case 'outbox':
      process.exitCode = await outbox([sub, ...rest].filter((a): a is string => a !== undefined));
      break;
    case 'signing-key':
      if (sub !== 'rotate') throw new Error(`unknown signing-key command ${sub ?? ''}`);
      process.exitCode = await rotateSigningKeyCommand(process.env, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    case 'portal':
      process.exitCode = await portalCommand(sub, rest, process.env, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    default:
      process.stderr.write('usage: efs run | migrate | tail TOPIC | dlt replay TOPIC | outbox quarantined|retry|discard | read-models rebuild | client-token create|revoke | utility-key create|revoke | signing-key rotate | portal frame-ancestors|branding\n');
      process.exit(2);
  }
} catch (err) {
  process.stderr.write(`efs ${command}: ${(err as Error).message}\n`);
  process.exit(1);
}
