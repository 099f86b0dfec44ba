import type { Admin, Consumer, Producer, RequestEvent } from 'kafkajs';

/** Requests sent to the broker by API (Produce, Fetch, OffsetCommit, Heartbeat, …), every client of a transport. */
export class RequestCounts {
  private readonly counts = new Map<string, number>();

  add(apiName: string, n = 1): void {
    this.counts.set(apiName, (this.counts.get(apiName) ?? 0) + n);
  }

  /** Counts every request the client sends from now on. */
  count(client: Producer | Consumer | Admin): void {
    const count = ({ payload }: RequestEvent) => this.add(payload.apiName);
    // Each client type declares its own overloads of on(); the request event is the same in all three.
    (client as Producer).on((client as Producer).events.REQUEST, count);
  }

  byApi(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}
