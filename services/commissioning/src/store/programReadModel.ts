import type { ProgramRecord } from '@efs/api';
import { ProgramFields, ProgramsTopic, fromWire, type ProgramMessage } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import type { Transport } from '@efs/messaging';

/** The consumer group of the read model (made this process's own by the transport: `inMemory`). */
const GROUP = 'efs-commissioning-programs';

/** How long a start waits for the read model to have read the programs topic before serving anyway (commissions then ask the catalog). */
const START_CATCH_UP_MS = 30_000;

/** Catalog order, as the catalog's store answers: by creation time, then id (uuids: their text order is their byte order). */
const catalogOrder = (a: ProgramRecord, b: ProgramRecord): number => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The catalog's programs as announced on the programs topic, kept in memory, for a commission's
 * eligibility without asking the catalog. Every start reads the whole (compacted) topic again;
 * a program's newest state wins (a dead letter replayed late carries an older one). The model is
 * used for a commission only once the transport tells that it has read the topic up to its end
 * as of a moment after the commission arrived (`upToDate`): the catalog answers a program's
 * creation or change only once its announcement is on the topic, so every change answered before
 * the commission is in the model then. Programs are never deleted (the topic has no tombstones).
 */
export class ProgramReadModel {
  private readonly byId = new Map<string, ProgramRecord>();
  /** Programs by the zip codes they cover, in catalog order; made again after a change (programs change rarely). */
  private byZip: Map<string, ProgramRecord[]> | undefined;
  private readonly transport: Transport;
  private readonly timeoutMs: number;
  private readonly log: Logger;
  private subscribed = false;
  /** A lookup did not catch up in time: commissions ask the catalog until `probe` catches up. */
  private stalled = false;
  private probe: Promise<void> | undefined;

  constructor(opts: { transport: Transport; timeoutMs: number; logger: Logger }) {
    this.transport = opts.transport;
    this.timeoutMs = opts.timeoutMs;
    this.log = opts.logger;
  }

  /**
   * Reads the topic, and waits (up to START_CATCH_UP_MS) until it has read it to its end, so that
   * a process does not serve commissions before it can answer them itself. Only on a transport
   * whose topics outlive the process: an in-process topic holds only what this start published,
   * not the catalog's programs from before, so commissions ask the catalog there.
   */
  async start(): Promise<void> {
    if (!this.transport.topicsOutliveProcess) return;
    await this.transport.subscribe(ProgramsTopic, GROUP, async (m) => this.apply(m.value), { inMemory: true });
    this.subscribed = true;
    const started = Date.now();
    if (await this.transport.caughtUp(ProgramsTopic, GROUP, { timeoutMs: START_CATCH_UP_MS })) this.log.info({ programs: this.byId.size, ms: Date.now() - started }, 'programs read from the topic');
    else this.log.warn({ timeout_ms: START_CATCH_UP_MS }, 'programs topic not read to its end in time; commissions ask the catalog until it is');
  }

  /** A program's announced state. */
  apply(message: ProgramMessage): void {
    const next = fromWire(ProgramFields, message);
    const current = this.byId.get(next.id);
    if (current && current.updated_at.getTime() > next.updated_at.getTime()) return;
    this.byId.set(next.id, next);
    this.byZip = undefined;
  }

  /**
   * True when the model holds every program change on the topic as of a moment after this call
   * (learnt within COMMISSIONING_PROGRAMS_CATCH_UP_MS); false otherwise, and then the caller asks
   * the catalog. Also false while the model holds no program at all: programs are never deleted,
   * so an empty topic means the catalog has none or has not announced its sandbox seed yet (a
   * fresh deployment whose catalog is still starting), and only the catalog can tell which. Once
   * a lookup has not caught up in time (the model's consumer lags or has stopped), commissions ask
   * the catalog at once instead of each waiting the timeout again, until a lookup made in the
   * background catches up.
   */
  async upToDate(): Promise<boolean> {
    if (!this.subscribed || this.byId.size === 0) return false;
    if (this.stalled) {
      this.probe ??= this.caughtUp().then((ok) => {
        this.stalled = !ok;
        this.probe = undefined;
      });
      return false;
    }
    const ok = await this.caughtUp();
    if (!ok) this.stalled = true;
    return ok;
  }

  private caughtUp(): Promise<boolean> {
    return this.transport.caughtUp(ProgramsTopic, GROUP, { timeoutMs: this.timeoutMs }).catch(() => false);
  }

  /** The programs covering a zip code (its first five digits), in catalog order. */
  covering(zip: string): readonly ProgramRecord[] {
    this.byZip ??= this.index();
    return this.byZip.get(zip) ?? [];
  }

  private index(): Map<string, ProgramRecord[]> {
    const byZip = new Map<string, ProgramRecord[]>();
    for (const p of [...this.byId.values()].sort(catalogOrder)) {
      for (const zip of new Set(p.zip_codes)) {
        const list = byZip.get(zip);
        if (list) list.push(p);
        else byZip.set(zip, [p]);
      }
    }
    return byZip;
  }
}
