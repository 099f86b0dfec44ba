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
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate, onShutdown } from '@efs/runtime';
import { KnexCredentialStore } from '../../services/gateway/src/auth/credentialStore.ts';
import { AUTH_SCHEMA } from '../../services/gateway/src/service.ts';
import { startSystem } from './allInOne.ts';
import { allModules, gatewayModule } from './modules.ts';

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

async function credentials(kind: 'client-token' | 'utility-key'): Promise<void> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-cli', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, [gatewayModule], logger);
  const store = new KnexCredentialStore(db.knex, AUTH_SCHEMA);
  try {
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { integrator: { type: 'string' }, utility: { type: 'string' }, name: { type: 'string' }, label: { type: 'string' } } });
    if (sub === 'create') {
      const owner = kind === 'client-token' ? values.integrator : values.utility;
      if (!owner) throw new Error(`--${kind === 'client-token' ? 'integrator' : 'utility'} is required`);
      const created =
        kind === 'client-token'
          ? (await store.ensureIntegrator(owner, values.name ?? owner), await store.createClientToken(owner, values.label ?? ''))
          : (await store.ensureUtility(owner, values.name ?? owner), await store.createUtilityKey(owner, values.label ?? ''));
      process.stdout.write(`id: ${created.id}\ntoken: ${created.token}\n(shown once; only its hash is stored)\n`);
    } else if (sub === 'revoke') {
      const id = positionals[0];
      if (!id) throw new Error('the id to revoke is required');
      const ok = kind === 'client-token' ? await store.revokeClientToken(id) : await store.revokeUtilityKey(id);
      process.stdout.write(ok ? `revoked ${id}\n` : `no active ${kind} ${id}\n`);
      if (!ok) process.exitCode = 1;
    } else {
      throw new Error(`unknown ${kind} command ${sub ?? ''}`);
    }
  } finally {
    await db.close();
  }
}

async function migrate(): Promise<void> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-migrate', level: common.LOG_LEVEL });
  const db = await createDatabaseAndMigrate(common, allModules, logger);
  await db.close();
}

try {
  switch (command) {
    case 'run':
      await run();
      break;
    case 'migrate':
      await migrate();
      break;
    case 'client-token':
    case 'utility-key':
      await credentials(command);
      break;
    default:
      process.stderr.write('usage: efs run | migrate | client-token create|revoke | utility-key create|revoke\n');
      process.exit(2);
  }
} catch (err) {
  process.stderr.write(`efs ${command}: ${(err as Error).message}\n`);
  process.exit(1);
}
