import { CredentialsTopic, SANDBOX_INTEGRATOR_ID, SANDBOX_UTILITY_ID } from '@efs/contracts';
import { Outbox, type Knex } from '@efs/db';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';
import { CredentialCache } from './credentialCache.ts';
import { KnexCredentialStore } from './credentialStore.ts';

/**
 * A replica's credentials: the cache requests are checked against, loaded from the auth schema
 * and kept current from efs.auth.credentials (every replica reads every change under its own
 * consumer group; a revocation is final), plus the outbox that announces this replica's own writes.
 */
export class CredentialSync {
  readonly cache = new CredentialCache();
  readonly store: KnexCredentialStore;
  private readonly outbox: Outbox;
  private readonly transport: Transport;
  private readonly logger: Logger;
  private readonly replicaId: string;
  private readonly reloadMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: { knex: Knex; schema: string; transport: Transport; logger: Logger; replicaId: string; reloadMs: number }) {
    this.outbox = new Outbox({ knex: opts.knex, schema: opts.schema, service: 'gateway', publisher: opts.transport, logger: opts.logger, topics: [CredentialsTopic], pollMs: 1000 });
    this.store = new KnexCredentialStore(opts.knex, opts.schema, this.outbox);
    this.transport = opts.transport;
    this.logger = opts.logger;
    this.replicaId = opts.replicaId;
    this.reloadMs = opts.reloadMs;
  }

  /** Registers the sandbox integrator's client token and the sandbox utility's key, when configured. */
  async registerSandbox(tokens: { clientToken?: string | undefined; utilityApiKey?: string | undefined }): Promise<void> {
    if (tokens.clientToken) {
      await this.store.ensureIntegrator(SANDBOX_INTEGRATOR_ID, 'Sandbox integrator');
      this.cache.apply((await this.store.createClientToken(SANDBOX_INTEGRATOR_ID, 'sandbox', tokens.clientToken)).record);
    }
    if (tokens.utilityApiKey) {
      await this.store.ensureUtility(SANDBOX_UTILITY_ID, 'Sandbox utility');
      this.cache.apply((await this.store.createUtilityKey(SANDBOX_UTILITY_ID, 'sandbox', tokens.utilityApiKey)).record);
    }
  }

  async start(): Promise<void> {
    // The table as it is now and every change from the topic merge into the same map.
    this.cache.applyAll(await this.store.listCredentials());
    await this.transport.subscribe(CredentialsTopic, `efs-gateway-credentials-${this.replicaId}`, async ({ value }) => this.cache.apply(value), { fromBeginning: true });
    this.outbox.start();
    // A safety net: revocations arrive on the topic within seconds.
    this.timer = setInterval(() => void this.reload().catch((err: Error) => this.logger.warn({ err }, 'credentials reload failed')), this.reloadMs);
    this.timer.unref();
  }

  private async reload(): Promise<void> {
    this.cache.applyAll(await this.store.listCredentials());
  }

  /** Resolves once every credential change written so far is published. */
  flush(): Promise<void> {
    return this.outbox.flush();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.outbox.stop();
  }
}
