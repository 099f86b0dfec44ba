import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { allTopics, ProgramsTopic } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { KafkaTransport, NonRetriableError } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl, tierAvailable, waitFor } from '@efs/testing';
import { replayDeadLetters } from '../cli/src/dlt.ts';
import { program } from '../libs/messaging/test/transportConformance.ts';

const run = await tierAvailable('kafka');

// `efs dlt replay` on the running broker: a consumer dead-letters what it cannot handle, the
// cause is fixed, and the replay hands the same messages back to it.
describe.runIf(run)('efs dlt replay', () => {
  const prefix = `dlt${randomBytes(4).toString('hex')}.`;
  const opts = { brokers: testKafkaBrokers().split(','), topicPrefix: prefix };
  const transport = new KafkaTransport({ brokers: opts.brokers, clientId: 'dlt-test', registryUrl: testRegistryUrl(), logger: createLogger({ name: 'test', level: 'silent' }), topics: allTopics, topicPrefix: prefix });
  afterAll(async () => {
    await transport.stop();
    await deleteTopicsWithPrefix(prefix);
  });

  it('publishes the dead letters of one group again where they came from, once, and lists them without publishing on --dry-run', async () => {
    await transport.start();
    let broken = true;
    const picky: { id: string; partition: number; name: string; headers: string[] }[] = [];
    const healthy: string[] = [];
    await transport.subscribe(ProgramsTopic, 'picky', async ({ value, meta }) => {
      if (broken) throw new NonRetriableError(`cannot handle ${value.id} yet`);
      picky.push({ id: meta.id, partition: meta.partition ?? -1, name: value.name, headers: Object.keys(meta.headers) });
    }, { fromBeginning: true });
    await transport.subscribe(ProgramsTopic, 'healthy', async ({ meta }) => void healthy.push(meta.id), { fromBeginning: true });
    const firstPartitions = new Map<string, number>();
    await transport.subscribe(ProgramsTopic, 'where', async ({ meta }) => void firstPartitions.set(meta.id, meta.partition ?? -1), { fromBeginning: true });
    await transport.publish(ProgramsTopic, 'p1', program('p1', 'one'), { messageId: 'm-1' });
    await transport.publish(ProgramsTopic, 'p2', program('p2', 'two'), { messageId: 'm-2' });
    await waitFor(() => healthy.length === 2 && firstPartitions.size === 2, { timeoutMs: 60_000, what: 'the healthy group' });

    const lines: string[] = [];
    const listed = await waitFor(
      async () => {
        lines.length = 0;
        const o = await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'picky', dryRun: true, out: (l) => lines.push(l) }).catch(() => undefined);
        return o && o.replayed === 2 ? o : undefined;
      },
      { timeoutMs: 60_000, what: 'two dead letters of picky' },
    );
    expect(listed).toEqual({ replayed: 2, skipped: 0, unplaceable: 0 });
    expect(lines.join('\n')).toContain('NonRetriableError: cannot handle p1 yet');
    expect(lines.join('\n')).toContain('group=picky');
    await new Promise((r) => setTimeout(r, 1000));
    expect(picky).toEqual([]);
    expect(healthy.sort()).toEqual(['m-1', 'm-2']);

    // Another group's replay finds none of its own and leaves picky's for it.
    expect(await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'someone-else', dryRun: false, out: () => undefined })).toEqual({ replayed: 0, skipped: 2, unplaceable: 0 });

    broken = false;
    expect(await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'picky', dryRun: false, out: () => undefined })).toEqual({ replayed: 2, skipped: 0, unplaceable: 0 });
    await waitFor(() => picky.length === 2, { timeoutMs: 60_000, what: 'picky handling the replayed messages' });
    // Same message ids, values and partitions as the first time; every group of the topic sees them again.
    expect(picky.map((p) => [p.id, p.name, p.partition]).sort()).toEqual([
      ['m-1', 'one', firstPartitions.get('m-1')],
      ['m-2', 'two', firstPartitions.get('m-2')],
    ]);
    // The dead-letter bookkeeping stays on the dead letter.
    expect(picky.flatMap((p) => p.headers.filter((h) => h.startsWith('efs-dlt')))).toEqual([]);
    await waitFor(() => healthy.length === 4, { timeoutMs: 60_000, what: 'the healthy group seeing them again' });

    // A second replay publishes only what was dead-lettered since.
    expect(await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'picky', dryRun: false, out: () => undefined })).toEqual({ replayed: 0, skipped: 0, unplaceable: 0 });
    broken = true;
    await transport.publish(ProgramsTopic, 'p3', program('p3', 'three'), { messageId: 'm-3' });
    await waitFor(() => healthy.length === 5, { timeoutMs: 60_000, what: 'p3 delivered' });
    await waitFor(
      async () => {
        const o = await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'picky', dryRun: true, out: () => undefined });
        return o.replayed === 1 ? o : undefined;
      },
      { timeoutMs: 60_000, what: 'p3 dead-lettered' },
    );
    broken = false;
    expect(await replayDeadLetters(opts, { topic: ProgramsTopic.name, group: 'picky', dryRun: false, out: () => undefined })).toEqual({ replayed: 1, skipped: 0, unplaceable: 0 });
    await waitFor(() => picky.length === 3, { timeoutMs: 60_000, what: 'picky handling p3' });
    expect(picky.at(-1)?.id).toBe('m-3');
  }, 240_000);
});
