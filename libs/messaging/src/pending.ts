import type { ReplyMessage } from '@efs/contracts';
import { ServiceUnavailableError } from './transport.ts';

interface Waiter {
  resolve: (reply: ReplyMessage) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Requests waiting for their reply, by correlation id. A request whose deadline passes is
 * answered with ServiceUnavailableError and forgotten, so a late reply finds nobody and is dropped.
 */
export class PendingReplies {
  private readonly waiting = new Map<string, Waiter>();
  lateReplies = 0;

  wait(correlationId: string, timeoutMs: number, target: string): Promise<ReplyMessage> {
    return new Promise<ReplyMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(correlationId);
        reject(new ServiceUnavailableError(`${target} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(correlationId, { resolve, reject, timer });
    });
  }

  /** Returns false for a reply nobody waits for any more (late or duplicate). */
  settle(correlationId: string, reply: ReplyMessage): boolean {
    const w = this.waiting.get(correlationId);
    if (!w) {
      this.lateReplies++;
      return false;
    }
    this.waiting.delete(correlationId);
    clearTimeout(w.timer);
    w.resolve(reply);
    return true;
  }

  fail(correlationId: string, err: Error): void {
    const w = this.waiting.get(correlationId);
    if (!w) return;
    this.waiting.delete(correlationId);
    clearTimeout(w.timer);
    w.reject(err);
  }

  get size(): number {
    return this.waiting.size;
  }

  rejectAll(err: Error): void {
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(err);
      this.waiting.delete(id);
    }
  }
}
