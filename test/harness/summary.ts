// The last lines `make test` prints: the totals of every vitest JSON report it was given, then each
// failed test by file and name with the first line of its error. CI keeps only the tail of a run,
// so a failure must be named here, not only in the reporter's output far above.
// Usage: node test/harness/summary.ts .run/vitest.json .run/vitest-distributed.json
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface AssertionResult {
  readonly fullName: string;
  readonly status: string;
  readonly failureMessages?: readonly string[];
}
interface FileResult {
  readonly name: string;
  readonly status: string;
  readonly message?: string;
  readonly assertionResults: readonly AssertionResult[];
}
interface Report {
  readonly success: boolean;
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
  readonly testResults: readonly FileResult[];
}

const firstLine = (text: string | undefined): string => (text ?? '').trim().split('\n')[0]?.slice(0, 300) ?? '';

const reports: Report[] = [];
const files: string[] = [];
const missing: string[] = [];
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) missing.push(file);
  else {
    reports.push(JSON.parse(readFileSync(file, 'utf8')) as Report);
    files.push(file);
  }
}

const failures: string[] = [];
for (const [i, report] of reports.entries()) {
  const before = failures.length;
  for (const file of report.testResults) {
    const where = relative(process.cwd(), file.name);
    const failed = file.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failed) failures.push(`FAILED ${where} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    // A file can fail with no test failed: an error in a hook, at import, or unhandled.
    if (file.status === 'failed' && failed.length === 0) failures.push(`FAILED ${where}: ${firstLine(file.message)}`);
  }
  // An error outside every test and file (an unhandled rejection) fails the run too: see its output above.
  if (!report.success && failures.length === before) failures.push(`FAILED ${files[i]}: the run reported an error outside any test (its output above names it)`);
}

const total = (key: 'numPassedTests' | 'numFailedTests' | 'numPendingTests' | 'numTodoTests'): number =>
  reports.reduce((sum, report) => sum + report[key], 0);
for (const line of failures) console.log(line);
for (const file of missing) console.log(`MISSING ${file}: that vitest run wrote no report`);
console.log(`tests: ${total('numPassedTests')} passed, ${total('numFailedTests')} failed, ${total('numPendingTests') + total('numTodoTests')} skipped`);
