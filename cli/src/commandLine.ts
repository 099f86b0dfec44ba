import { parseArgs } from 'node:util';

/** One option of a command: its parseArgs type, how its value is shown in the usage, and what it does. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** The value's name in the usage (`--integrator ID`); string options only. */
  readonly value?: string;
  readonly help: string;
  readonly default?: string | boolean;
  /** The command cannot run without it. */
  readonly required?: true;
  /** May be given more than once (string options): its value is the list. */
  readonly multiple?: true;
}

/**
 * One command of the CLI (`efs tail`, `efs client-token create`): its words, its options and
 * positionals, and the help it answers to `--help`. The command's own code parses its arguments
 * with the same options (`parseArgsOptions`), so what `--help` lists is what it accepts.
 */
export interface CommandSpec {
  /** The words after `efs`: `tail`, `client-token create`. */
  readonly name: string;
  /** What it does, one line. */
  readonly summary: string;
  /** The positionals as shown in the usage (`TOPIC`, `ID...`), if it takes any. */
  readonly positionals?: { readonly usage: string; readonly min: number; readonly max?: number };
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** More lines for `--help`, if the summary and options do not say it all. */
  readonly details?: readonly string[];
}

type Options = Readonly<Record<string, OptionSpec>>;

/** The parseArgs options of a command's options, their types kept, so the values it parses are typed. */
export type ParseArgsOptionsOf<O extends Options> = {
  -readonly [K in keyof O]: { type: O[K]['type'] } & (O[K] extends { readonly default: infer D } ? { default: D } : unknown) & (O[K] extends { readonly multiple: true } ? { multiple: true } : unknown);
};

/** A command's options as node:util parseArgs takes them (declare the spec `as const satisfies CommandSpec`). */
export function parseArgsOptions<const O extends Options>(spec: { readonly options: O }): ParseArgsOptionsOf<O> {
  return Object.fromEntries(
    Object.entries(spec.options).map(([name, o]) => [name, { type: o.type, ...(o.default === undefined ? {} : { default: o.default }), ...(o.multiple ? { multiple: true } : {}) }]),
  ) as ParseArgsOptionsOf<O>;
}

const optionUsage = (name: string, o: OptionSpec) => `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}${o.multiple ? ' ...' : ''}`;

/** `efs tail TOPIC [--from-beginning] [--max N] [--idle-ms MS]` */
export function usageLine(spec: CommandSpec): string {
  const options = Object.entries(spec.options).map(([name, o]) => (o.required ? ` ${optionUsage(name, o)}` : ` [${optionUsage(name, o)}]`));
  return `efs ${spec.name}${spec.positionals ? ` ${spec.positionals.usage}` : ''}${options.join('')}`;
}

/** What `efs <command> --help` prints. */
export function commandHelp(spec: CommandSpec): string {
  const rows = [...Object.entries(spec.options).map(([name, o]) => [optionUsage(name, o), o.help + (o.required ? ' (required)' : '') + (o.default !== undefined && o.default !== false ? ` (default ${String(o.default)})` : '')] as const), ['-h, --help', 'print this help and exit'] as const];
  const width = Math.max(...rows.map(([u]) => u.length));
  return [
    `usage: ${usageLine(spec)}`,
    '',
    spec.summary,
    ...(spec.details ? ['', ...spec.details] : []),
    '',
    'options:',
    ...rows.map(([u, help]) => `  ${u.padEnd(width)}  ${help}`),
    '',
  ].join('\n');
}

/** A command line that does not fit the command: the caller prints its one-line message and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const quoted = (message: string) => /'([^']*)'/.exec(message)?.[1];

/**
 * Checks `args` against the command's options (strictly: an unknown option, a missing value, a
 * value given to a flag, a required option left out) and the number of its positionals, before
 * anything runs. Throws a
 * UsageError whose message is one line naming what was wrong and where to look.
 */
export function checkArgs(spec: CommandSpec, args: readonly string[]): void {
  const see = `(see efs ${spec.name} --help)`;
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options: parseArgsOptions(spec), allowPositionals: spec.positionals !== undefined, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    const what = quoted(e.message);
    switch (e.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`unknown option ${what ?? ''} for '${spec.name}' ${see}`);
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        throw new UsageError(`unexpected argument '${what ?? ''}' for '${spec.name}' ${see}`);
      default: {
        // ERR_PARSE_ARGS_INVALID_OPTION_VALUE: a string option without its value, or a flag given one.
        const option = what?.split(' ')[0] ?? '';
        if (/argument missing/.test(e.message)) throw new UsageError(`option ${option} of '${spec.name}' needs a value ${see}`);
        if (/does not take an argument/.test(e.message)) throw new UsageError(`option ${option} of '${spec.name}' takes no value ${see}`);
        throw new UsageError(`${e.message.split('\n')[0]} ${see}`);
      }
    }
  }
  for (const [name, o] of Object.entries(spec.options)) {
    if (o.required && parsed.values[name] === undefined) throw new UsageError(`'${spec.name}' needs ${optionUsage(name, o)} ${see}`);
  }
  const { positionals } = parsed;
  const p = spec.positionals;
  if (p && positionals.length < p.min) throw new UsageError(`'${spec.name}' needs ${p.usage} ${see}`);
  if (p?.max !== undefined && positionals.length > p.max) throw new UsageError(`unexpected argument '${positionals[p.max]}' for '${spec.name}' ${see}`);
}

/** Whether the command line asks for help (before a `--` that ends the options). */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
