/**
 * Writes deploy/k8s/alerts.yaml, the PrometheusRule (Prometheus Operator) whose spec is
 * deploy/prometheus/rules.yml, the rules' one source: `node deploy/prometheus/prometheusRule.ts`
 * after editing rules.yml. test/alertRules.test.ts fails when the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

const root = join(import.meta.dirname, '..', '..');
export const rulesPath = join(root, 'deploy', 'prometheus', 'rules.yml');
export const prometheusRulePath = join(root, 'deploy', 'k8s', 'alerts.yaml');

/** The PrometheusRule manifest of a Prometheus rules file's text. */
export function prometheusRuleOf(rulesText: string): string {
  const { groups } = parse(rulesText) as { groups: unknown[] };
  const manifest = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'efs', labels: { 'app.kubernetes.io/part-of': 'efs' } },
    spec: { groups },
  };
  return (
    '# Generated from deploy/prometheus/rules.yml by `node deploy/prometheus/prometheusRule.ts`: edit\n' +
    '# rules.yml (its comments say why each threshold), then run it. Runbook: docs/runbook.md.\n' +
    '# Label it (or set the Prometheus\'s ruleSelector) as your Prometheus selects PrometheusRules.\n' +
    stringify(manifest, { lineWidth: 0 })
  );
}

if (import.meta.filename === process.argv[1]) {
  writeFileSync(prometheusRulePath, prometheusRuleOf(readFileSync(rulesPath, 'utf8')));
}
