import { parseArgs } from 'node:util';
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from 'kafkajs';
import { DeadLetterHeaders, deadLetterTopicName } from '@efs/contracts';
import { parseArgsOptions, usageLine, type CommandSpec } from './commandLine.ts';

export const dltReplaySpec = {
  name: 'dlt replay',
  summary: "Publishes TOPIC's dead letters again, each to the partition it came from, once their cause is fixed (needs KAFKA_BROKERS).",
  positionals: { usage: 'TOPIC', min: 1, max: 1 },
  options: {
    group: { type: 'string', value: 'GROUP', help: "only the dead letters of this consumer group (remembered apart from the other groups')" },
    'dry-run': { type: 'boolean', default: false, help: 'list what would be replayed; publish nothing' },
  },
  details: ['TOPIC as in `efs tail`, without .dlt. A second replay publishes only what was dead-lettered since.'],
} as const satisfies CommandSpec;

export interface DltOptions {
  brokers: string[];
  /** KAFKA_TOPIC_PREFIX: the prefix of every topic and consumer group of the system. */
  topicPrefix: string;
}

/** What one replay did, per dead letter, in the dead-letter topic's order. */
export interface ReplayOutcome {
  replayed: number;
  /** Dead letters of another consumer group than `--group` (left for that group's replay). */
  skipped: number;
  /** Records of the dead-letter topic that do not say where they came from (not written by a consumer). */
  unplaceable: number;
}

const dltHeaderNames = new Set<string>(Object.values(DeadLetterHeaders));
const text = (v: IHeaders[string]): string | undefined => (v === undefined ? undefined : Array.isArray(v) ? String(v[0]) : String(v));

/**
 * `efs dlt replay TOPIC [--group G] [--dry-run]`: publishes the dead letters of TOPIC again, once
 * the cause that sent them there is fixed. Each goes back to the topic and partition it came
 * from with its key, value (the original bytes: Avro with its schema id) and headers, message id
 * included, less the dead-letter headers. Every consumer group of the topic sees it again, and
 * every consumer is idempotent on what it has handled (read models keep the newest state,
 * webhook messages and readings are keyed by the message id or their own key), so the groups
 * that had handled it change nothing.
 *
 * What has been replayed is remembered as the offsets of a consumer group of the dead-letter
 * topic (`efs-dlt-replay`, or `efs-dlt-replay.G` with `--group`): a second replay publishes only
 * what was dead-lettered since. It reads up to the topic's end at the start and stops there.
 * `--dry-run` lists what a replay would publish and publishes nothing.
 */
export async function dltCommand(opts: DltOptions, args: readonly string[], io: { out(line: string): void }): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: parseArgsOptions(dltReplaySpec) });
  const [sub, topic] = positionals;
  if (sub !== 'replay' || !topic || positionals.length > 2) {
    io.out(`usage: ${usageLine(dltReplaySpec)}   (TOPIC as in \`efs tail\`, without .dlt)`);
    return 2;
  }
  const outcome = await replayDeadLetters(opts, { topic, group: values.group, dryRun: values['dry-run'], out: io.out });
  io.out(
    `${values['dry-run'] ? 'would replay' : 'replayed'} ${outcome.replayed}` +
      (outcome.skipped ? `, left ${outcome.skipped} of other groups` : '') +
      (outcome.unplaceable ? `, ${outcome.unplaceable} without their origin (not replayable)` : ''),
  );
  return 0;
}

export async function replayDeadLetters(opts: DltOptions, r: { topic: string; group?: string; dryRun: boolean; out(line: string): void }): Promise<ReplayOutcome> {
  const original = opts.topicPrefix + r.topic;
  const dlt = deadLetterTopicName(original);
  const kafka = new Kafka({ clientId: 'efs-dlt', brokers: opts.brokers, logLevel: logLevel.NOTHING });
  const groupId = `${opts.topicPrefix}efs-dlt-replay${r.group ? `.${r.group}` : ''}`;
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  let committed: Map<number, bigint>;
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(dlt)) throw new Error(`${dlt} does not exist (nothing of ${original} was ever dead-lettered, or KAFKA_TOPIC_PREFIX differs)`);
    const bounds = await admin.fetchTopicOffsets(dlt);
    ends = new Map(bounds.map((p) => [p.partition, BigInt(p.high)]));
    const low = new Map(bounds.map((p) => [p.partition, BigInt(p.low)]));
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [dlt] });
    committed = new Map((offsets?.partitions ?? []).map((p) => [p.partition, p.offset === '-1' ? low.get(p.partition)! : BigInt(p.offset)]));
  } finally {
    await admin.disconnect();
  }
  const outcome: ReplayOutcome = { replayed: 0, skipped: 0, unplaceable: 0 };
  // Partitions with nothing past what was replayed before are done before the first fetch.
  const open = new Set([...ends].filter(([p, end]) => (committed.get(p) ?? 0n) < end).map(([p]) => p));
  if (open.size === 0) return outcome;

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await Promise.all([producer.connect(), consumer.connect()]);
  try {
    await consumer.subscribe({ topics: [dlt], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch, heartbeat }) => {
            const end = ends.get(batch.partition) ?? 0n;
            const wanted = batch.messages.filter((m) => BigInt(m.offset) < end);
            const out: { topic: string; partition: number; message: KafkaMessage }[] = [];
            for (const m of wanted) {
              const h = m.headers ?? {};
              const from = { topic: text(h[DeadLetterHeaders.originalTopic]), partition: text(h[DeadLetterHeaders.originalPartition]), offset: text(h[DeadLetterHeaders.originalOffset]) };
              const group = text(h[DeadLetterHeaders.group]) ?? '';
              const where = `${dlt}[${batch.partition}]@${m.offset}`;
              // Consumers record the topic's name without KAFKA_TOPIC_PREFIX.
              if (from.topic !== r.topic || from.partition === undefined) {
                outcome.unplaceable++;
                r.out(`${where}: says it came from ${from.topic ?? 'nowhere'}; not replayed`);
                continue;
              }
              if (r.group !== undefined && group !== r.group) {
                outcome.skipped++;
                continue;
              }
              outcome.replayed++;
              out.push({ topic: original, partition: Number(from.partition), message: m });
              r.out(`${where} -> ${original}[${from.partition}] (was offset ${from.offset ?? '?'}) key=${m.key?.toString() ?? ''} group=${group} reason=${text(h[DeadLetterHeaders.reason]) ?? ''}`);
            }
            if (!r.dryRun && out.length > 0) {
              await producer.send({
                topic: original,
                acks: -1,
                messages: out.map(({ partition, message }) => ({
                  partition,
                  key: message.key,
                  value: message.value,
                  headers: Object.fromEntries(Object.entries(message.headers ?? {}).filter(([k]) => !dltHeaderNames.has(k))) as IHeaders,
                })),
              });
            }
            const last = wanted.at(-1);
            if (last && !r.dryRun) await consumer.commitOffsets([{ topic: dlt, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
            await heartbeat();
            if (BigInt(batch.highWatermark) >= end && (last === undefined || BigInt(last.offset) + 1n >= end)) {
              open.delete(batch.partition);
              if (open.size === 0) resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect()]);
  }
  return outcome;
}
