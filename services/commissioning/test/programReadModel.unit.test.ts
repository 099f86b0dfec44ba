import { describe, expect, it } from 'vitest';
import { ProgramsTopic, type ProgramMessage, type Topic } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { ProgramReadModel } from '../src/store/programReadModel.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

/**
 * The in-process transport as if its topics outlived the process (as Kafka's do), so the model
 * reads them. `lagging` fakes the one fault not produced here for real: a model's consumer that
 * does not catch up in time; its lookups wait until `settle` answers them.
 */
class OutlivingTopics extends InProcessTransport {
  override readonly topicsOutliveProcess = true;
  lagging = false;
  lookups = 0;
  private held: ((ok: boolean) => void)[] = [];
  override caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean> {
    this.lookups++;
    if (!this.lagging) return super.caughtUp(topic, group, options);
    return new Promise((resolve) => this.held.push(resolve));
  }
  settle(ok: boolean): void {
    for (const resolve of this.held.splice(0)) resolve(ok);
  }
}

const program = (id: string, zip: string): ProgramMessage => ({
  id, utility_id: 'u', name: id, description: '', eligible_device_types: ['BATTERY'], zip_codes: [zip], can_auto_enroll: false,
  minimum_reserve_percentage: 0, minimum_commitment_months: null, participation_months: [], enrollment_form: [],
  rates: { upfront_per_kwh: 0, upfront_per_device: 0, yearly_per_kw: 0, yearly_per_device: 0 },
  terms_and_conditions_version: null, terms_and_conditions_text: null, auto_approve_after_ms: null,
  created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
});

describe("commissioning's read model of the programs topic", () => {
  it('is not used while it holds no program (the catalog may not have announced its seed yet), and is once it does', async () => {
    const transport = new OutlivingTopics({ logger });
    const model = new ProgramReadModel({ transport, timeoutMs: 1000, logger });
    await model.start();
    expect(await model.upToDate()).toBe(false);
    await transport.publish(ProgramsTopic, 'p1', program('p1', '11111'));
    expect(await model.upToDate()).toBe(true);
    expect(model.covering('11111').map((p) => p.id)).toEqual(['p1']);
  });

  it('after a lookup that did not catch up, answers false at once until a lookup in the background does', async () => {
    const transport = new OutlivingTopics({ logger });
    const model = new ProgramReadModel({ transport, timeoutMs: 1000, logger });
    await model.start();
    await transport.publish(ProgramsTopic, 'p1', program('p1', '11111'));
    transport.lagging = true;
    const first = model.upToDate();
    transport.settle(false);
    expect(await first).toBe(false);
    // Stalled: these answer while the background lookup is still unanswered (before, each waited).
    const before = transport.lookups;
    expect(await model.upToDate()).toBe(false);
    expect(await model.upToDate()).toBe(false);
    expect(transport.lookups - before).toBe(1);
    transport.lagging = false;
    transport.settle(true);
    await new Promise((r) => setImmediate(r));
    expect(await model.upToDate()).toBe(true);
    expect(model.covering('11111')).toHaveLength(1);
  });
});
