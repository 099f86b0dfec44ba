#!/usr/bin/env node
/**
 * efs: the project's command-line tool. `efs --help` lists the commands, `efs COMMAND --help`
 * (or `efs help COMMAND`) gives one's options. Exit codes: 0 done, 1 the command failed, 2 the
 * command line is wrong (an unknown command or option, a missing argument: one line on stderr).
 */
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate, onShutdown } from '@efs/runtime';
import { startSystem } from './allInOne.ts';
import { asksForHelp, checkArgs, commandHelp, usageLine, UsageError, type CommandSpec } from './commandLine.ts';
import { credentialCommand, credentialSpecs, revokeSigningKeyCommand, revokeSigningKeySpec, rotateSigningKeyCommand, rotateSigningKeySpec } from './credentials.ts';
import { dltCommand, dltReplaySpec } from './dlt.ts';
import { allModules } from './modules.ts';
import { openAdrClientCommand, openAdrClientSpecs } from './openadr.ts';
import { outboxCommand, outboxSpecs } from './outbox.ts';
import { portalCommand, portalSpecs } from './portal.ts';
import { portalOidcCommand, portalOidcSpecs } from './portalOidc.ts';
import { tailCommand, tailSpec } from './tail.ts';

async function run(): Promise<void> {
  const system = await startSystem();
  const u = system.urls;
  system.logger.info({ ...u, transport: system.transport.kind, database: system.db.kind }, 'all services started');
  process.stdout.write(
    `\nEnergy Flexibility Enrollment Service is running (${system.transport.kind} transport, ${system.db.kind} database)\n` +
      `  public API   ${u.public}   (OpenAPI: ${u.public}/openapi.json)\n` +
      `  utility API  ${u.utility}\n` +
      `  portal       ${u.portal}\n` +
      `  metrics      ${system.healthUrl}/metrics   (health: /healthz, /readyz; HEALTH_PORT)\n\n`,
  );
  onShutdown(system.logger, () => system.stop());
}

async function outbox(sub: string, args: string[]): Promise<number> {
  const common = parseConfig(z.object(commonEnv), process.env);
  const logger = createLogger({ name: 'efs-outbox', level: 'warn' });
  const db = await createDatabaseAndMigrate(common, allModules, logger);
  try {
    const schemas = allModules.map((m) => m.schema).filter((s): s is string => s !== null);
    return await outboxCommand(db, schemas, sub, args, { out: (l) => process.stdout.write(`${l}\n`) });
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

const out = { out: (l: string) => process.stdout.write(`${l}\n`) };

/** A command: what it accepts (its spec) and what it does with its arguments, returning the exit code. */
interface Command {
  spec: CommandSpec;
  run(args: string[]): Promise<number | void>;
}

const commonConfig = () => parseConfig(z.object(commonEnv), process.env);

const runSpec = { name: 'run', summary: 'Runs every service in one process: in-process transport and embedded PGlite under DATA_DIR unless KAFKA_BROKERS / DATABASE_URL are set.', options: {} } as const satisfies CommandSpec;
const migrateSpec = { name: 'migrate', summary: "Runs every service's migrations against DATABASE_URL, then exits (a deployment's migration job).", options: {} } as const satisfies CommandSpec;
const rebuildSpec = {
  name: 'read-models rebuild',
  summary: 'Every service re-announces its current state through its outbox; read models that missed events catch up.',
  options: {},
} as const satisfies CommandSpec;

/** Commands under a word (`portal`), by their next word; a group may hold groups (`portal oidc set`). */
interface Group {
  [word: string]: Command | Group;
}

/** Every command, by its first word; a word with several commands under it maps their next words. */
const COMMANDS: Group = {
  run: { spec: runSpec, run: run },
  migrate: { spec: migrateSpec, run: migrate },
  tail: { spec: tailSpec, run: (args) => tailCommand(commonConfig(), args) },
  dlt: {
    replay: {
      spec: dltReplaySpec,
      run: (args) => {
        const common = commonConfig();
        if (!common.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set (dead letters exist only with Kafka)');
        return dltCommand({ brokers: common.KAFKA_BROKERS.split(','), topicPrefix: common.KAFKA_TOPIC_PREFIX }, ['replay', ...args], out);
      },
    },
  },
  outbox: Object.fromEntries(Object.entries(outboxSpecs).map(([sub, spec]) => [sub, { spec, run: (args: string[]) => outbox(sub, args) }])),
  'read-models': { rebuild: { spec: rebuildSpec, run: rebuildReadModels } },
  'client-token': {
    create: { spec: credentialSpecs['client-token'].create, run: (args) => credentialCommand('client-token', 'create', args, process.env, out) },
    revoke: { spec: credentialSpecs['client-token'].revoke, run: (args) => credentialCommand('client-token', 'revoke', args, process.env, out) },
  },
  'utility-key': {
    create: { spec: credentialSpecs['utility-key'].create, run: (args) => credentialCommand('utility-key', 'create', args, process.env, out) },
    revoke: { spec: credentialSpecs['utility-key'].revoke, run: (args) => credentialCommand('utility-key', 'revoke', args, process.env, out) },
  },
  'signing-key': {
    rotate: { spec: rotateSigningKeySpec, run: () => rotateSigningKeyCommand(process.env, out) },
    revoke: { spec: revokeSigningKeySpec, run: (args) => revokeSigningKeyCommand(args[0]!, process.env, out) },
  },
  portal: {
    ...Object.fromEntries(Object.entries(portalSpecs).map(([sub, spec]) => [sub, { spec, run: (args: string[]) => portalCommand(sub, args, process.env, out) }])),
    oidc: Object.fromEntries(Object.entries(portalOidcSpecs).map(([sub, spec]) => [sub, { spec, run: (args: string[]) => portalOidcCommand(sub, args, process.env, out) }])),
  },
  openadr: {
    client: {
      create: { spec: openAdrClientSpecs.create, run: (args) => openAdrClientCommand('create', args, process.env, out) },
      list: { spec: openAdrClientSpecs.list, run: (args) => openAdrClientCommand('list', args, process.env, out) },
      revoke: { spec: openAdrClientSpecs.revoke, run: (args) => openAdrClientCommand('revoke', args, process.env, out) },
    },
  },
};

const isCommand = (c: Command | Group): c is Command => 'spec' in c && 'run' in c && typeof c.run === 'function';
const commandsOf = (c: Command | Group): Command[] => (isCommand(c) ? [c] : Object.values(c).flatMap(commandsOf));
const HELP_FLAGS = new Set(['--help', '-h']);

/** One line a command in a list: its words and positionals, then what it does. */
function commandList(commands: readonly Command[]): string[] {
  const heads = commands.map((c) => `${c.spec.name}${c.spec.positionals ? ` ${c.spec.positionals.usage}` : ''}`);
  const width = Math.max(...heads.map((h) => h.length));
  return commands.map((c, i) => `  ${heads[i]!.padEnd(width)}  ${c.spec.summary}`);
}

function topHelp(): string {
  return [
    'usage: efs COMMAND [OPTIONS]',
    '',
    "The Energy Flexibility Enrollment Service's command-line tool. Commands:",
    '',
    ...commandList(Object.values(COMMANDS).flatMap(commandsOf)),
    '',
    'efs COMMAND --help (or efs help COMMAND) prints a command\'s options. The database is DATABASE_URL',
    '(unset: the embedded one under DATA_DIR); Kafka is KAFKA_BROKERS and SCHEMA_REGISTRY_URL.',
    '',
  ].join('\n');
}

/** What `efs client-token --help` prints: the commands under one word. */
const groupHelp = (words: string, group: Group) =>
  [`usage: efs ${words} ${Object.keys(group).join('|')} [OPTIONS]`, '', ...commandsOf(group).map((c) => `  ${usageLine(c.spec)}\n      ${c.spec.summary}`), '', `efs ${words} COMMAND --help prints a command's options.`, ''].join('\n');

/**
 * Finds the command the line names and checks its arguments: help is printed (exit 0), a line that
 * fits no command throws a UsageError, otherwise the command and its arguments are returned.
 */
function resolve(argv: string[]): { help: string } | { command: Command; args: string[] } {
  const [word, ...rest] = argv;
  if (word === undefined) throw new UsageError(`a command is needed (see efs --help)`);
  if (HELP_FLAGS.has(word)) return { help: topHelp() };
  if (word === 'help') return rest.length === 0 ? { help: topHelp() } : resolve([...rest, '--help']);
  if (word.startsWith('-')) throw new UsageError(`unknown option ${word} (see efs --help)`);
  const entry = Object.hasOwn(COMMANDS, word) ? COMMANDS[word] : undefined;
  if (!entry) throw new UsageError(`unknown command '${word}' (see efs --help)`);
  let node: Command | Group = entry;
  let words = word;
  let args = rest;
  while (!isCommand(node)) {
    const [sub, ...subArgs] = args;
    if (sub === undefined || HELP_FLAGS.has(sub)) {
      if (sub !== undefined) return { help: groupHelp(words, node) };
      throw new UsageError(`'${words}' needs a command: ${Object.keys(node).join(', ')} (see efs ${words} --help)`);
    }
    const found: Command | Group | undefined = Object.hasOwn(node, sub) ? node[sub] : undefined;
    if (!found) throw new UsageError(`unknown command '${words} ${sub}' (see efs ${words} --help)`);
    node = found;
    words = `${words} ${sub}`;
    args = subArgs;
  }
  const command = node;
  if (asksForHelp(args)) return { help: commandHelp(command.spec) };
  checkArgs(command.spec, args);
  return { command, args };
}

/** Runs the command line; the exit code, or undefined for a command that keeps running (`efs run`). */
async function main(argv: string[]): Promise<number | undefined> {
  let resolved: ReturnType<typeof resolve>;
  try {
    resolved = resolve(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`efs: ${err.message}\n`);
    return 2;
  }
  if ('help' in resolved) {
    process.stdout.write(resolved.help);
    return 0;
  }
  try {
    return (await resolved.command.run(resolved.args)) ?? undefined;
  } catch (err) {
    process.stderr.write(`efs ${resolved.command.spec.name}: ${(err as Error).message}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
