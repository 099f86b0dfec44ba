/**
 * CI check: every value schema in `allTopics` has a committed snapshot under `history/`, and each
 * snapshot can read data written with the one before it (Avro BACKWARD compatibility, the rule
 * the schema registry enforces too).
 *
 *   node libs/contracts/src/checkCompatibility.ts           check, exit 1 on any problem
 *   node libs/contracts/src/checkCompatibility.ts --write   also snapshot changed schemas
 */
import { readdirSync, readFileSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { allTopics } from './allTopics.ts';

const historyDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'history');

export interface CompatibilityProblem {
  subject: string;
  problem: string;
}

/** Whether a reader using `readerSchema` can decode data written with `writerSchema`. */
export function isBackwardCompatible(readerSchema: unknown, writerSchema: unknown): { ok: true } | { ok: false; reason: string } {
  try {
    const reader = avro.Type.forSchema(readerSchema as avro.Schema);
    const writer = avro.Type.forSchema(writerSchema as avro.Schema);
    reader.createResolver(writer);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

function versionsOf(subject: string): { version: number; schema: unknown }[] {
  const dir = join(historyDir, subject);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => /^v(\d+)\.avsc$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), schema: JSON.parse(readFileSync(join(dir, m[0]), 'utf8')) as unknown }))
    .sort((a, b) => a.version - b.version);
}

export function checkAll(write: boolean): CompatibilityProblem[] {
  const problems: CompatibilityProblem[] = [];
  const seen = new Set<string>();
  for (const topic of allTopics) {
    if (seen.has(topic.subject)) continue;
    seen.add(topic.subject);
    const versions = versionsOf(topic.subject);
    for (let i = 1; i < versions.length; i++) {
      const r = isBackwardCompatible(versions[i]!.schema, versions[i - 1]!.schema);
      if (!r.ok) problems.push({ subject: topic.subject, problem: `v${versions[i]!.version} cannot read v${versions[i - 1]!.version}: ${r.reason}` });
    }
    const current = JSON.stringify(topic.schema, null, 2) + '\n';
    const latest = versions.at(-1);
    if (latest && JSON.stringify(latest.schema, null, 2) + '\n' === current) continue;
    if (latest) {
      const r = isBackwardCompatible(topic.schema, latest.schema);
      if (!r.ok) {
        problems.push({ subject: topic.subject, problem: `current schema cannot read v${latest.version}: ${r.reason}` });
        continue;
      }
    }
    if (write) {
      const version = (latest?.version ?? 0) + 1;
      mkdirSync(join(historyDir, topic.subject), { recursive: true });
      writeFileSync(join(historyDir, topic.subject, `v${version}.avsc`), current);
      console.log(`snapshot ${topic.subject} v${version}`);
    } else {
      problems.push({ subject: topic.subject, problem: 'schema changed without a snapshot: run `npm run contracts:snapshot` and commit history/' });
    }
  }
  return problems;
}

if (import.meta.main) {
  const problems = checkAll(process.argv.includes('--write'));
  for (const p of problems) console.error(`${p.subject}: ${p.problem}`);
  console.log(problems.length === 0 ? `contracts: ${allTopics.length} topics, all schemas snapshotted and backward compatible` : `contracts: ${problems.length} problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
