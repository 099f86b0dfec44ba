/** The current request's deadline: set for a request's work, absent from the work it only starts. */
import { describe, expect, it } from 'vitest';
import { outsideRequest, requestDeadline, withRequestDeadline } from '@efs/contracts';

describe('request deadline', () => {
  it('is the deadline of the request being handled, through its async work', async () => {
    const seen = await withRequestDeadline(1234, async () => {
      await new Promise((r) => setImmediate(r));
      return requestDeadline();
    });
    expect(seen).toBe(1234);
    expect(requestDeadline()).toBeUndefined();
  });

  it('is absent from work a request starts outside it, and outside any request', async () => {
    const started = await withRequestDeadline(1234, () => outsideRequest(async () => {
      await new Promise((r) => setImmediate(r));
      return requestDeadline();
    }));
    expect(started).toBeUndefined();
    expect(outsideRequest(() => requestDeadline())).toBeUndefined();
    // Back inside the request once the work outside it has been started.
    expect(withRequestDeadline(99, () => [outsideRequest(() => requestDeadline()), requestDeadline()])).toEqual([undefined, 99]);
  });
});
