import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { CommonConfig } from '@efs/config';
import { parseArgsOptions, type CommandSpec } from './commandLine.ts';

export const tailSpec = {
  name: 'tail',
  summary: "Prints a topic's records as JSON lines, Avro values decoded through the schema registry (needs KAFKA_BROKERS).",
  positionals: { usage: 'TOPIC', min: 1, max: 1 },
  options: {
    'from-beginning': { type: 'boolean', default: false, help: 'read from the start of the topic, not only what arrives from now on' },
    max: { type: 'string', value: 'N', help: 'stop after N records' },
    'idle-ms': { type: 'string', value: 'MS', default: '5000', help: 'stop once no record has arrived for MS milliseconds' },
  },
  details: ['TOPIC is named without KAFKA_TOPIC_PREFIX (efs.catalog.programs; its dead letters: efs.catalog.programs.dlt).'],
} as const satisfies CommandSpec;

/**
 * `efs tail TOPIC`: prints a topic's records as JSON lines, Avro values decoded through the schema
 * registry by the id each record carries (what `kcat -s value=avro` does where kcat has Avro support).
 */
export async function tailCommand(config: CommonConfig, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: parseArgsOptions(tailSpec) });
  const topic = positionals[0];
  if (!topic) throw new Error('usage: efs tail TOPIC [--from-beginning] [--max N] [--idle-ms MS]');
  if (!config.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set');
  const kafka = new Kafka({ clientId: 'efs-tail', brokers: config.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const registry = new SchemaRegistry({ host: config.SCHEMA_REGISTRY_URL });
  const name = config.KAFKA_TOPIC_PREFIX + topic;
  const consumer = kafka.consumer({ groupId: `efs-tail-${process.pid}-${Date.now()}` });
  const max = values.max ? Number(values.max) : Infinity;
  let seen = 0;
  let lastAt = Date.now();
  await consumer.connect();
  await consumer.subscribe({ topics: [name], fromBeginning: values['from-beginning'] });
  await new Promise<void>((resolve) => {
    const idle = setInterval(() => {
      if (Date.now() - lastAt > Number(values['idle-ms'])) {
        clearInterval(idle);
        resolve();
      }
    }, 200);
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        lastAt = Date.now();
        if (seen >= max) return;
        seen++;
        const value = message.value ? await registry.decode(message.value).catch((e: Error) => ({ undecodable: e.message })) : null;
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        const schemaId = message.value && message.value[0] === 0 ? message.value.readInt32BE(1) : null;
        process.stdout.write(JSON.stringify({ partition, offset: message.offset, key: message.key?.toString() ?? null, schema_id: schemaId, headers, value }) + '\n');
        if (seen >= max) {
          clearInterval(idle);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
}
