import { SettingsRequestsTopic, deviceKey } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { toSettingsMessage, type SettingsRequest } from '../domain/settings.ts';
import type { SettingsStore } from './settingsStore.ts';

interface SettingsWriterDeps {
  store: SettingsStore;
  outbox: Outbox;
}

/** Every write of a settings request and its announcement (keyed by device) commit together. */
export class SettingsWriter {
  private readonly deps: SettingsWriterDeps;

  constructor(deps: SettingsWriterDeps) {
    this.deps = deps;
  }

  async create(trx: Knex.Transaction, r: SettingsRequest): Promise<void> {
    await this.deps.store.insert(trx, r);
    await this.publish(trx, r, 'CREATED');
  }

  async update(trx: Knex.Transaction, r: SettingsRequest): Promise<void> {
    await this.deps.store.update(trx, r);
    await this.publish(trx, r, 'UPDATED');
  }

  private async publish(trx: Knex.Transaction, r: SettingsRequest, change: 'CREATED' | 'UPDATED'): Promise<void> {
    await this.deps.outbox.enqueue(trx, SettingsRequestsTopic, deviceKey(r.integrator_id, r.site_id, r.device_id), toSettingsMessage(r, change));
  }
}
