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
 *   efs tail TOPIC [--from-beginning] [--max N]   print a topic's records, Avro decoded via the registry
 */
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate, onShutdown } from '@efs/runtime';
import { credentialCommand, rotateSigningKeyCommand } from '../../services/gateway/src/credentialsCli.ts';
import { startSystem } from './allInOne.ts';
import { tailCommand } from './tail.ts';
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
    case 'tail':
      await tailCommand(parseConfig(z.object(commonEnv), process.env), [sub, ...rest].filter((a): a is string => a !== undefined));
      break;
    case 'migrate':
      await migrate();
      break;
    case 'client-token':
    case 'utility-key':
      process.exitCode = await credentialCommand(command, sub, rest, process.env, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    case 'signing-key':
      if (sub !== 'rotate') throw new Error(`unknown signing-key command ${sub ?? ''}`);
      process.exitCode = await rotateSigningKeyCommand(process.env, { out: (l) => process.stdout.write(`${l}\n`) });
      break;
    default:
      process.stderr.write('usage: efs run | migrate | tail TOPIC | client-token create|revoke | utility-key create|revoke | signing-key rotate\n');
      process.exit(2);
  }
} catch (err) {
  process.stderr.write(`efs ${command}: ${(err as Error).message}\n`);
  process.exit(1);
}
