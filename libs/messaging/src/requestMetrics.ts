import type { ReplyMessage, RequestTarget } from '@efs/contracts';
import { meter, secondsHistogram, type Attributes, type Counter, type Histogram } from '@efs/telemetry';
import { ServiceUnavailableError } from './transport.ts';

/**
 * How a request ended for its caller: `ok` (answered 2xx/3xx), `client_error` (answered 4xx: the
 * service refused what was asked), `server_error` (answered 5xx, a request that reached its
 * service after its deadline among them), `timeout` (no answer by the deadline, or the broker
 * unreachable: the caller answers 503), `error` (the request could not be made at all).
 */
export type RequestOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'error';

const OUTCOMES: readonly RequestOutcome[] = ['ok', 'client_error', 'server_error', 'timeout', 'error'];

export const outcomeOfReply = (reply: ReplyMessage): RequestOutcome => (reply.status < 400 ? 'ok' : reply.status < 500 ? 'client_error' : 'server_error');

export const outcomeOfFailure = (err: unknown): RequestOutcome => (err instanceof ServiceUnavailableError ? 'timeout' : 'error');

/**
 * Operation names are the catalogues' (a few dozen); past this many distinct names the rest are
 * labelled `<service>._OTHER`, so a peer sending made-up names cannot grow the series without bound.
 */
export const MAX_OPERATIONS = 200;

interface OperationLabels {
  byOutcome: Record<RequestOutcome, Attributes>;
  expired: Attributes;
}

/**
 * Request/reply metrics of a transport: efs.messaging.request.duration_seconds (from the caller's
 * request to its reply or failure, by `operation` and `outcome`) and efs.messaging.requests.expired
 * (requests a serving process dropped unhandled because they reached it past their deadline, by
 * `operation`). `operation` is the service that answers and the operation's name in its catalogue
 * (`commissioning.commission`). The attributes of an operation are built the first time it is
 * seen, so a request allocates none.
 */
export class RequestMetrics {
  private readonly duration: Histogram;
  private readonly expiredCount: Counter;
  private readonly labels = new Map<RequestTarget, Map<string, OperationLabels>>();
  private operations = 0;

  constructor() {
    const m = meter();
    this.duration = secondsHistogram('efs.messaging.request.duration_seconds', 'Time from a request being sent to its reply (or its failure), at the caller, by operation and outcome');
    this.expiredCount = m.createCounter('efs.messaging.requests.expired', { description: 'Requests dropped unhandled by their service because they reached it past their deadline', unit: '{request}' });
  }

  /**
   * Records the duration of the request started at `startedMs` (performance.now()) once `reply`
   * settles, and answers `reply` as it settles.
   */
  timed(target: RequestTarget, op: string, startedMs: number, reply: Promise<ReplyMessage>): Promise<ReplyMessage> {
    const labels = this.labelsOf(target, op).byOutcome;
    return reply.then(
      (r) => {
        this.duration.record((performance.now() - startedMs) / 1000, labels[outcomeOfReply(r)]);
        return r;
      },
      (err: unknown) => {
        this.duration.record((performance.now() - startedMs) / 1000, labels[outcomeOfFailure(err)]);
        throw err;
      },
    );
  }

  /** Counts a request dropped unhandled past its deadline; `op` unknown (a caller that does not name it) is `_OTHER`. */
  expired(target: RequestTarget, op: string | undefined): void {
    this.expiredCount.add(1, this.labelsOf(target, op ?? '_OTHER').expired);
  }

  private labelsOf(target: RequestTarget, op: string): OperationLabels {
    let ofTarget = this.labels.get(target);
    if (!ofTarget) this.labels.set(target, (ofTarget = new Map()));
    let labels = ofTarget.get(op);
    if (labels) return labels;
    const name = this.operations < MAX_OPERATIONS ? op : '_OTHER';
    labels = ofTarget.get(name);
    if (!labels) {
      this.operations++;
      const operation = `${target}.${name}`;
      const byOutcome = {} as Record<RequestOutcome, Attributes>;
      for (const outcome of OUTCOMES) byOutcome[outcome] = { operation, outcome };
      labels = { byOutcome, expired: { operation } };
      ofTarget.set(name, labels);
    }
    return labels;
  }
}
