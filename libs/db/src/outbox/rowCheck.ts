import avro from 'avsc';
import type { Topic } from '@efs/contracts';
import type { OutboxRow } from './quarantine.ts';

/** What the relay hands the transport of a row: its topic, value and trace headers. */
export interface CheckedRow {
  topic: Topic;
  value: unknown;
  headers: Record<string, string>;
}

/** The topics a relay publishes to, each with its Avro type: whether a stored row can be carried. */
export class RowCheck {
  private readonly topics = new Map<string, { topic: Topic; type: avro.Type }>();

  constructor(topics: readonly Topic[]) {
    for (const t of topics) this.topics.set(t.name, { topic: t, type: avro.Type.forSchema(t.schema as avro.Schema) });
  }

  /** The row's topic, value and headers, or why the topic's Avro schema (or this outbox) cannot carry it. */
  prepare(row: OutboxRow): CheckedRow | { problem: string } {
    const known = this.topics.get(row.topic);
    if (!known) return { problem: `topic ${row.topic} is not one this outbox publishes to` };
    let value: unknown;
    let headers: Record<string, string>;
    try {
      value = typeof row.value === 'string' ? JSON.parse(row.value) : row.value;
      headers = (typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers) ?? {};
    } catch {
      return { problem: 'the stored value is not JSON' };
    }
    const wrong: string[] = [];
    const valid = known.type.isValid(value, {
      errorHook: (path: string[], _v: unknown, type: avro.Type) => void wrong.push(`${path.join('.') || 'the value'} is not a valid ${type.branchName ?? type.typeName}`),
    });
    if (!valid) return { problem: `the value does not fit the Avro schema of ${row.topic}: ${wrong.slice(0, 5).join('; ')}` };
    return { topic: known.topic, value, headers };
  }
}
