import { parseArgs } from 'node:util';
import { z } from 'zod';
import { commonEnv, parseConfig } from '@efs/config';
import { createLogger } from '@efs/logging';
import { createDatabaseAndMigrate } from '@efs/runtime';
import { AUTH_SCHEMA, Branding, BRANDING_FIELDS, gateway, KnexPortalSettingsStore, parseFrameOrigins, SANDBOX_INTEGRATOR_ID, type BrandingChange, type BrandingField } from '@efs/gateway';
import { parseArgsOptions, usageLine, type CommandSpec, type OptionSpec } from './commandLine.ts';
import type { CliIo } from './credentials.ts';

/** `primary_button_background` is given as `--primary-button-background`. */
const flagOf = (field: BrandingField) => field.replaceAll('_', '-');

/** How a branding field's value is shown in the usage: `--logo-url URL`, `--text-color #rrggbb`. */
const valueOf = (field: BrandingField) => (field.endsWith('_url') ? 'URL' : /color|background|border|text/.test(field) ? '#rrggbb' : 'VALUE');

const integrator = { type: 'string', value: 'ID', required: true, help: 'the integrator whose portal it is' } as const;

export const portalSpecs = {
  'frame-ancestors': {
    name: 'portal frame-ancestors',
    summary: "Sets the origins allowed to frame the integrator's portal (e.g. https://app.acme.com https://*.acme.com); without origins it prints them.",
    positionals: { usage: '[ORIGIN ...]', min: 0 },
    options: { integrator, none: { type: 'boolean', help: 'allow no framing at all' } },
  },
  branding: {
    name: 'portal branding',
    summary: "Sets the given fields of the integrator's portal branding (an empty VALUE removes one) and prints the result; without fields it prints it.",
    options: {
      integrator,
      ...(Object.fromEntries(BRANDING_FIELDS.map((f) => [flagOf(f), { type: 'string', value: valueOf(f), help: `the ${f.replaceAll('_', ' ')} ('' removes it)` }])) as Record<string, OptionSpec>),
      reset: { type: 'boolean', help: 'remove every field' },
    },
  },
} as const satisfies Record<string, CommandSpec>;

export const PORTAL_USAGE = Object.values(portalSpecs).map(usageLine).join('\n');
const isSub = (sub: string | undefined): sub is keyof typeof portalSpecs => sub !== undefined && Object.hasOwn(portalSpecs, sub);

/**
 * `efs portal frame-ancestors` and `efs portal branding`: an integrator's portal settings in the
 * auth schema. Every gateway reads them when it serves a portal page, so a change applies at the
 * next page load, on every replica, without a rebuild or restart. Returns the exit code.
 */
export async function portalCommand(sub: string | undefined, args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  if (!isSub(sub)) throw new Error(`unknown portal command ${sub ?? ''}\n${PORTAL_USAGE}`);
  const { values, positionals } = parseArgs({ args, allowPositionals: sub === 'frame-ancestors', options: parseArgsOptions<Readonly<Record<string, OptionSpec>>>(portalSpecs[sub]) });
  const integrator = values.integrator;
  if (typeof integrator !== 'string' || integrator === '') throw new Error('--integrator is required');

  // Everything is checked before the database is opened.
  let origins: string[] | undefined;
  let change: BrandingChange | 'reset' | undefined;
  if (sub === 'frame-ancestors') {
    if (values.none && positionals.length > 0) throw new Error('give origins or --none, not both');
    if (integrator === SANDBOX_INTEGRATOR_ID && (values.none || positionals.length > 0)) {
      throw new Error('the sandbox integrator is framed as SANDBOX_PORTAL_FRAME_ANCESTORS says (unset: any origin)');
    }
    if (values.none) origins = [];
    else if (positionals.length > 0) {
      const parsed = parseFrameOrigins(positionals);
      if (!parsed.ok) throw new Error(parsed.message);
      origins = parsed.origins;
    }
  } else if (values.reset) {
    change = 'reset';
  } else {
    const given = Object.fromEntries(BRANDING_FIELDS.filter((f) => typeof values[flagOf(f)] === 'string').map((f) => [f, values[flagOf(f)] as string]));
    const set = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== ''));
    const checked = Branding.safeParse(set);
    if (!checked.success) throw new Error(checked.error.issues.map((i) => `--${flagOf(i.path[0] as BrandingField)}: ${i.message}`).join('\n'));
    change = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, v === '' ? null : v])) as BrandingChange;
    if (Object.keys(change).length === 0) change = undefined;
  }

  const common = parseConfig(z.object(commonEnv), env);
  const db = await createDatabaseAndMigrate(common, [gateway], createLogger({ name: 'efs-cli', level: 'warn' }));
  const store = new KnexPortalSettingsStore(db.knex, AUTH_SCHEMA);
  try {
    if (sub === 'frame-ancestors') {
      if (origins) await store.setFrameAncestors(integrator, origins);
      const now = await store.get(integrator);
      if (!now) throw new Error(`unknown integrator ${integrator}`);
      if (integrator === SANDBOX_INTEGRATOR_ID) io.out('sandbox integrator: framed as SANDBOX_PORTAL_FRAME_ANCESTORS says (unset: any origin)');
      else if (!now.frame_ancestors || now.frame_ancestors.length === 0) io.out(`${integrator}: no origin may frame the portal`);
      else io.out(`${integrator}: frame-ancestors ${now.frame_ancestors.join(' ')}`);
    } else {
      const branding = change ? await store.changeBranding(integrator, change) : (await store.get(integrator))?.branding;
      if (!branding) throw new Error(`unknown integrator ${integrator}`);
      io.out(JSON.stringify(branding, null, 2));
    }
    return 0;
  } finally {
    await db.close();
  }
}
