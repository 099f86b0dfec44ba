import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { describe } from 'vitest';
import { allTopics, deadLetterTopicName, ProgramsTopic } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { KafkaTransport } from '@efs/messaging';
import { deleteTopicsWithPrefix, testKafkaBrokers, testRegistryUrl, tierAvailable } from '@efs/testing';
import { fromDeadLetterHeaders, transportConformance, type ObservedDeadLetter } from './transportConformance.ts';

const run = await tierAvailable('kafka');
const logger = createLogger({ name: 'test', level: 'silent' });

/** Every record of a run's dead-letter topic, read up to its end offset (so an empty answer is final, not early). */
async function readDeadLetters(prefix: string): Promise<ObservedDeadLetter[]> {
  const kafka = new Kafka({ brokers: testKafkaBrokers().split(','), logLevel: logLevel.NOTHING });
  const topic = deadLetterTopicName(prefix + ProgramsTopic.name);
  const admin = kafka.admin();
  await admin.connect();
  const end = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const total = end.reduce((n, p) => n + Number(p.high), 0);
  if (total === 0) return [];
  const consumer = kafka.consumer({ groupId: `${prefix}inspect-${randomBytes(3).toString('hex')}` });
  const seen: ObservedDeadLetter[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            seen.push(fromDeadLetterHeaders(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]))));
            if (seen.length >= total) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

// Each test gets its own topic prefix: its topics, groups and subjects start empty.
describe.runIf(run)('Kafka transport on the running broker', () => {
  transportConformance(
    'kafka',
    async () => {
      const prefix = `c${randomBytes(4).toString('hex')}.`;
      const make = (replyInstanceId?: string) =>
        new KafkaTransport({ brokers: testKafkaBrokers().split(','), clientId: 'conformance', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix, ...(replyInstanceId ? { replyInstanceId } : {}) });
      const server = make();
      const caller = make('caller');
      await Promise.all([server.start(), caller.start()]);
      return {
        server,
        caller,
        deadLetters: () => readDeadLetters(prefix),
        // A broker that accepts connections and never answers, as one that hangs or is cut off does.
        unacknowledged: async () => {
          const sockets = new Set<Socket>();
          const silent = createServer((s) => void sockets.add(s.on('error', () => undefined)));
          await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
          const publisher = new KafkaTransport({ brokers: [`127.0.0.1:${(silent.address() as AddressInfo).port}`], clientId: 'conformance-silent', registryUrl: testRegistryUrl(), logger, topics: allTopics, topicPrefix: prefix });
          return {
            publisher,
            release: async () => {
              for (const s of sockets) s.destroy();
              await new Promise<void>((r) => silent.close(() => r()));
              await publisher.stop();
            },
          };
        },
        close: async () => {
          await Promise.allSettled([caller.stop(), server.stop()]);
          await deleteTopicsWithPrefix(prefix);
        },
      };
    },
    { waitMs: 60_000, deadlineMs: 1000 },
  );
});
