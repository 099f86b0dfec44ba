/**
 * The command line of `bin/efs`, run as a child process as a user runs it: help on `--help`, `-h`
 * and `help` (exit 0, on stdout), every command's own `--help` (exit 0, its options), and a line
 * that fits no command (exit 2, one line on stderr saying what was wrong and where to look).
 * None of these opens a database or a broker. And the Node.js preflight of `npm test`: one line
 * and exit 1 on a Node older than package.json's engines, nothing on this one.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function efs(...args: string[]): Promise<Outcome> {
  // DATABASE_URL points nowhere: a command that got past its checks would fail (exit 1), not pass.
  const env = { ...process.env, DATABASE_URL: 'postgres://efs-cli-test@127.0.0.1:9/none', KAFKA_BROKERS: '' };
  try {
    const { stdout, stderr } = await run('bin/efs', args, { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every command, as its words after `efs`, with an option only it has (to see its own help). */
const COMMANDS: [string[], string][] = [
  [['run'], ''],
  [['migrate'], ''],
  [['tail'], '--from-beginning'],
  [['dlt', 'replay'], '--dry-run'],
  [['outbox', 'quarantined'], '--json'],
  [['outbox', 'retry'], '--all'],
  [['outbox', 'discard'], '--schema'],
  [['read-models', 'rebuild'], ''],
  [['client-token', 'create'], '--integrator'],
  [['client-token', 'revoke'], 'TOKEN_ID'],
  [['utility-key', 'create'], '--utility'],
  [['utility-key', 'revoke'], 'KEY_ID'],
  [['signing-key', 'rotate'], 'SIGNING_KEY_ENCRYPTION_KEY'],
  [['signing-key', 'revoke'], 'KID'],
  [['portal', 'frame-ancestors'], '--none'],
  [['portal', 'branding'], '--primary-button-background'],
  [['portal', 'oidc', 'set'], '--client-secret-file FILE'],
  [['portal', 'oidc', 'show'], 'never the client secret'],
  [['portal', 'oidc', 'unset'], 'answer 404'],
];

const oneLine = (o: Outcome) => o.stderr.trimEnd().split('\n');

// Each case starts a process that loads the CLI (about 2 s of CPU): they run side by side.
describe.concurrent('bin/efs command line', { timeout: 300_000 }, () => {
  it.each([['--help'], ['-h'], ['help']])('`efs %s` prints the usage with every command and exits 0', async (flag) => {
    const o = await efs(flag);
    expect(o).toMatchObject({ code: 0, stderr: '' });
    expect(o.stdout).toMatch(/^usage: efs COMMAND/);
    for (const [words] of COMMANDS) expect(o.stdout).toContain(`  ${words.join(' ')}`);
  });

  it.each(COMMANDS)('`efs %s --help` prints its own usage and options and exits 0', async (words, own) => {
    const o = await efs(...words, '--help');
    expect(o).toMatchObject({ code: 0, stderr: '' });
    expect(o.stdout).toMatch(new RegExp(`^usage: efs ${words.join(' ')}\\b`));
    expect(o.stdout).toContain('-h, --help');
    expect(o.stdout).toContain(own);
  });

  it.each([
    ['tail', '-h'],
    ['help', 'tail'],
    ['client-token', 'create', 'x', '--bogus', '-h'],
  ])('`efs %s` prints the command’s own help too', async (...args) => {
    const o = await efs(...args);
    expect(o).toMatchObject({ code: 0, stderr: '' });
    expect(o.stdout).toMatch(/^usage: efs (tail|client-token create) /);
  });

  it('`efs client-token --help` lists the commands under the word and exits 0', async () => {
    const o = await efs('client-token', '--help');
    expect(o).toMatchObject({ code: 0, stderr: '' });
    expect(o.stdout).toContain('efs client-token create --integrator ID');
    expect(o.stdout).toContain('efs client-token revoke TOKEN_ID');
  });

  it.each([
    [['frobnicate'], "efs: unknown command 'frobnicate' (see efs --help)"],
    [['--foo'], 'efs: unknown option --foo (see efs --help)'],
    [['run', '--foo'], "efs: unknown option --foo for 'run' (see efs run --help)"],
    [['tail', 'efs.catalog.programs', '--form-beginning'], "efs: unknown option --form-beginning for 'tail' (see efs tail --help)"],
    [['tail'], "efs: 'tail' needs TOPIC (see efs tail --help)"],
    [['tail', 'a', '--max'], "efs: option --max of 'tail' needs a value (see efs tail --help)"],
    [['tail', 'a', '--from-beginning=yes'], "efs: option --from-beginning of 'tail' takes no value (see efs tail --help)"],
    [['client-token'], "efs: 'client-token' needs a command: create, revoke (see efs client-token --help)"],
    [['client-token', 'delete'], "efs: unknown command 'client-token delete' (see efs client-token --help)"],
    [['client-token', 'create'], "efs: 'client-token create' needs --integrator ID (see efs client-token create --help)"],
    [['client-token', 'create', '--utility', 'gridco'], "efs: unknown option --utility for 'client-token create' (see efs client-token create --help)"],
    [['outbox', 'discard'], "efs: 'outbox discard' needs ID... (see efs outbox discard --help)"],
    [['outbox', 'discard', 'x', '--all'], "efs: unknown option --all for 'outbox discard' (see efs outbox discard --help)"],
    [['portal', 'branding', '--integrator', 'acme', '--colour', '#fff'], "efs: unknown option --colour for 'portal branding' (see efs portal branding --help)"],
    [['portal', 'oidc'], "efs: 'portal oidc' needs a command: set, show, unset (see efs portal oidc --help)"],
    [['portal', 'oidc', 'set', '--integrator', 'acme'], "efs: 'portal oidc set' needs --issuer URL (see efs portal oidc set --help)"],
  ])('`efs %s` exits 2 with one line on stderr', async (args, line) => {
    const o = await efs(...args);
    expect(o.code).toBe(2);
    expect(o.stdout).toBe('');
    expect(oneLine(o)).toEqual([line]);
  });

  it('`efs` without a command exits 2 with one line on stderr', async () => {
    const o = await efs();
    expect(o.code).toBe(2);
    expect(oneLine(o)).toEqual(['efs: a command is needed (see efs --help)']);
  });
});

describe('the Node.js preflight of npm test', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string }; scripts: Record<string, string> };

  it('runs first in `npm test` and `npm run test:unit`', () => {
    expect(pkg.scripts.test).toMatch(/^node deploy\/local\/checkNode\.cjs && vitest run/);
    expect(pkg.scripts['test:unit']).toMatch(/^node deploy\/local\/checkNode\.cjs && vitest run/);
  });

  it('lets this Node.js through silently', async () => {
    const { stdout, stderr } = await run(process.execPath, ['deploy/local/checkNode.cjs']);
    expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
  });

  // The machine's own node, when it is older than the project's (Debian's Node 20, say).
  const systemNode = '/usr/bin/node';

  it('stops an older Node.js with one line naming the Node.js needed and the make targets that fetch it', async (ctx) => {
    if (!existsSync(systemNode)) return ctx.skip();
    const { stdout: version } = await run(systemNode, ['--version']);
    const need = Number(/^>=\s*(\d+)/.exec(pkg.engines.node)![1]);
    if (Number(/^v(\d+)/.exec(version)![1]) >= need) return ctx.skip();
    const o = await run(systemNode, ['deploy/local/checkNode.cjs'], { env: { ...process.env, npm_lifecycle_event: 'test:unit' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(o.code).toBe(1);
    const lines = o.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`npm run test:unit runs on Node.js ${pkg.engines.node}, and this is ${version.trim()}`);
    expect(lines[0]).toContain('`make test` / `make test-unit` fetch it');
  });
});
