import type { Logger } from '@efs/logging';
import type { Program } from '../domain/program.ts';
import type { ProgramFilter, ProgramStore } from './programStore.ts';

/** The reads the catalog's request handlers make; answered from memory by ProgramReadModel. */
export type ProgramReads = Pick<ProgramStore, 'list' | 'listByZip' | 'get'>;

/**
 * The catalog's programs in memory, in the store's order (created_at, id), so that reads (every
 * GET /v1/programs, every commission's eligibility question) run no SQL. The catalog changes
 * rarely: after each change it commits, and after each change announced on the programs topic
 * (another replica's), the whole list is read again from the store, so the model holds exactly
 * what the store would answer (its order, its jsonb key order, its sorted zip codes).
 */
export class ProgramReadModel implements ProgramReads {
  private programs: readonly Program[] = [];
  private byId = new Map<string, Program>();
  private readonly store: ProgramStore;
  private readonly log: Logger;
  /** The reload running now, and whether a change arrived while it ran (it then runs once more). */
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(store: ProgramStore, logger: Logger) {
    this.store = store;
    this.log = logger;
  }

  /**
   * Reads every program from the store. Resolves once a read that started after this call has
   * been applied, so a caller that committed a change sees it in the model when this resolves.
   */
  async reload(): Promise<void> {
    if (this.loading) {
      // The read in flight may have started before the caller's commit: it runs once more.
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const all = await this.store.list({ skip: 0, limit: Number.MAX_SAFE_INTEGER });
          this.programs = all;
          this.byId = new Map(all.map((p) => [p.id, p]));
        } while (this.again);
      } finally {
        this.loading = undefined;
      }
    })();
    await this.loading;
  }

  /**
   * After this process committed a change: the model shows it once this resolves. A failed read
   * is logged, not thrown: the change is committed (an error would invite a duplicate), and its
   * announcement on the programs topic reloads the model again.
   */
  async changed(): Promise<void> {
    await this.reload().catch((err: Error) => this.log.error({ err }, 'programs not read again after a change; its announcement will reload them'));
  }

  async list(filter: ProgramFilter): Promise<Program[]> {
    const matching = this.programs.filter(
      (p) =>
        (filter.zipCode === undefined || p.zip_codes.includes(filter.zipCode)) &&
        (filter.deviceType === undefined || p.eligible_device_types.includes(filter.deviceType)) &&
        (filter.utilityId === undefined || p.utility_id === filter.utilityId),
    );
    return matching.slice(filter.skip, filter.skip + filter.limit);
  }

  async listByZip(zipCode: string): Promise<Program[]> {
    return this.programs.filter((p) => p.zip_codes.includes(zipCode));
  }

  async get(id: string): Promise<Program | undefined> {
    return this.byId.get(id);
  }
}
