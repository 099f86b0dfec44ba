/**
 * Requests the gateway is working on, across its listeners, against GATEWAY_MAX_IN_FLIGHT: a
 * request over the limit is refused before any work (authentication included), so under
 * overload the gateway answers early instead of taking on work it cannot finish in time.
 */
export class InFlightLimit {
  private current = 0;
  readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /** Takes a place; false when every place is taken. */
  tryAcquire(): boolean {
    if (this.current >= this.max) return false;
    this.current++;
    return true;
  }

  release(): void {
    this.current = Math.max(0, this.current - 1);
  }

  get inFlight(): number {
    return this.current;
  }
}
