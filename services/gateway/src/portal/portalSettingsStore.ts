import { SchemaStore, type Knex } from '@efs/db';
import { Branding, type BrandingField, type BrandingType } from './branding.ts';

/** An integrator's portal as configured: who may frame it (null: never set) and its look. */
export interface PortalSettings {
  integrator_id: string;
  integrator_name: string;
  frame_ancestors: string[] | null;
  branding: BrandingType;
}

/** A branding change: a value sets a field, null removes it (the portal's default applies again). */
export type BrandingChange = Partial<Record<BrandingField, string | null>>;

export interface PortalSettingsStore {
  /** Undefined for an unknown integrator. */
  get(integratorId: string): Promise<PortalSettings | undefined>;
  setFrameAncestors(integratorId: string, origins: readonly string[]): Promise<void>;
  /** Applies the change (validated again here, so nothing invalid is ever stored) and answers the result. */
  changeBranding(integratorId: string, change: BrandingChange | 'reset'): Promise<BrandingType>;
}

export class UnknownIntegratorError extends Error {
  constructor(id: string) {
    super(`unknown integrator ${id} (an integrator exists once a client token was created for it: efs client-token create --integrator ${id})`);
    this.name = 'UnknownIntegratorError';
  }
}

interface Row {
  integrator_id: string;
  integrator_name: string;
  frame_ancestors: string[] | null;
  branding: unknown;
}

/** Stored branding read back: fields that no longer validate are left out rather than served. */
function readBranding(stored: unknown): BrandingType {
  const out: Record<string, unknown> = {};
  if (stored && typeof stored === 'object') {
    for (const [k, v] of Object.entries(stored)) {
      const one = Branding.safeParse({ [k]: v });
      if (one.success) Object.assign(out, one.data);
    }
  }
  return out as BrandingType;
}

/** The `auth.portal_settings` table, one row per integrator that configured its portal. */
export class KnexPortalSettingsStore extends SchemaStore implements PortalSettingsStore {
  async get(integratorId: string): Promise<PortalSettings | undefined> {
    const row = (await this.knex
      .withSchema(this.schema)
      .from('integrators as i')
      .leftJoin('portal_settings as p', 'p.integrator_id', 'i.id')
      .where('i.id', integratorId)
      .first('i.id as integrator_id', 'i.name as integrator_name', 'p.frame_ancestors', 'p.branding')) as Row | undefined;
    if (!row) return undefined;
    return { integrator_id: row.integrator_id, integrator_name: row.integrator_name, frame_ancestors: row.frame_ancestors, branding: readBranding(row.branding) };
  }

  async setFrameAncestors(integratorId: string, origins: readonly string[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await this.ensureRow(trx, integratorId);
      await this.table('portal_settings', trx).where({ integrator_id: integratorId }).update({ frame_ancestors: JSON.stringify(origins), updated_at: trx.fn.now() });
    });
  }

  async changeBranding(integratorId: string, change: BrandingChange | 'reset'): Promise<BrandingType> {
    return this.knex.transaction(async (trx) => {
      await this.ensureRow(trx, integratorId);
      const row = (await this.table('portal_settings', trx).where({ integrator_id: integratorId }).forUpdate().first('branding')) as { branding: unknown };
      const next: Record<string, unknown> = change === 'reset' ? {} : { ...readBranding(row.branding) };
      if (change !== 'reset') {
        for (const [k, v] of Object.entries(change)) {
          if (v === null) delete next[k];
          else next[k] = v;
        }
      }
      const branding = Branding.parse(next);
      await this.table('portal_settings', trx).where({ integrator_id: integratorId }).update({ branding: JSON.stringify(branding), updated_at: trx.fn.now() });
      return branding;
    });
  }

  private async ensureRow(trx: Knex.Transaction, integratorId: string): Promise<void> {
    const known = await this.table('integrators', trx).where({ id: integratorId }).first('id');
    if (!known) throw new UnknownIntegratorError(integratorId);
    await this.table('portal_settings', trx).insert({ integrator_id: integratorId }).onConflict('integrator_id').ignore();
  }
}
