import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ReadingsTopic } from '@efs/contracts';
import { READINGS_CONSUMER_GROUP } from '../services/telemetry-ingest/src/service.ts';

const root = join(import.meta.dirname, '..');
const serviceFolders = readdirSync(join(root, 'services'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { build?: { args?: { SERVICE?: string }; dockerfile?: string }; environment?: Record<string, string>; depends_on?: Record<string, unknown>; ports?: string[] }>;
};

describe('docker-compose.yml matches services/', () => {
  it('has every service folder and nothing else as a service built from its folder', () => {
    const built = Object.entries(compose.services)
      .filter(([name]) => name !== 'migrate')
      .filter(([, s]) => s.build?.args?.SERVICE)
      .map(([name, s]) => {
        expect(s.build!.args!.SERVICE).toBe(name);
        return name;
      })
      .sort();
    expect(built).toEqual(serviceFolders);
  });

  it('gives every service its entry point, the shared infrastructure and ordering on the migration job', () => {
    for (const name of serviceFolders) {
      expect(existsSync(join(root, 'services', name, 'src', 'main.ts')), `${name} has src/main.ts`).toBe(true);
      const s = compose.services[name]!;
      expect(s.environment).toMatchObject({ KAFKA_BROKERS: 'kafka:9092', DATABASE_URL: expect.stringContaining('postgres://'), SCHEMA_REGISTRY_URL: expect.stringContaining('/apis/ccompat/v7') });
      expect(Object.keys(s.depends_on ?? {})).toEqual(expect.arrayContaining(['migrate', 'kafka', 'schema-registry']));
    }
  });

  it('publishes the three gateway listeners of decisions.md', () => {
    const g = compose.services.gateway!;
    expect(g.ports).toEqual(['8080:8080', '8081:8081', '8082:8082']);
    expect(g.environment).toMatchObject({ PORT: '8080', UTILITY_PORT: '8081', PORTAL_PORT: '8082' });
  });

  it('has Kubernetes manifests for every service', () => {
    const k8s = readFileSync(join(root, 'deploy', 'k8s', 'services.yaml'), 'utf8');
    const names = k8s
      .split(/^---$/m)
      .map((doc) => parse(doc) as { kind?: string; metadata?: { name?: string } } | null)
      .filter((d) => d?.kind === 'Deployment')
      .map((d) => d!.metadata!.name)
      .sort();
    expect(names).toEqual(serviceFolders);
  });

  it('lets only the gateway\'s listeners and the health ports be reached, and keeps a replica of each scaled Deployment through a drain', () => {
    const kustomization = parse(readFileSync(join(root, 'deploy', 'k8s', 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    const files = readdirSync(join(root, 'deploy', 'k8s')).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    type Doc = { kind?: string; metadata?: { name?: string }; spec?: any } | null;
    const docs = files.flatMap((f) => readFileSync(join(root, 'deploy', 'k8s', f), 'utf8').split(/^---$/m).map((doc) => parse(doc) as Doc));
    const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    const policies = docs.filter((d) => d?.kind === 'NetworkPolicy');
    for (const d of docs.filter((x) => x?.kind === 'Deployment')) {
      const labels = d!.spec.template.metadata.labels as Record<string, string>;
      const selecting = policies.filter((p) => matches(p!.spec.podSelector.matchLabels, labels));
      expect(selecting.length, `${d!.metadata!.name} is selected by a NetworkPolicy`).toBeGreaterThan(0);
      const allowed = new Set(selecting.flatMap((p) => p!.spec.ingress.flatMap((rule: { ports: { port: string }[] }) => rule.ports.map((x) => x.port))));
      const declared = (d!.spec.template.spec.containers as { ports?: { name: string }[] }[]).flatMap((c) => (c.ports ?? []).map((x) => x.name));
      // Every listener is reachable (probes included); beyond the shared health port, nothing else is.
      for (const port of declared) expect(allowed.has(port), `${d!.metadata!.name}: ${port}`).toBe(true);
      expect([...allowed].filter((port) => port !== 'health' && !declared.includes(port)), d!.metadata!.name).toEqual([]);
      if (d!.metadata!.name !== 'gateway') expect(declared).toEqual(['health']);
      if (d!.spec.replicas > 1) {
        const budget = docs.find((p) => p?.kind === 'PodDisruptionBudget' && matches(p.spec.selector.matchLabels, labels));
        expect(budget?.spec.maxUnavailable, `${d!.metadata!.name} has a disruption budget`).toBeLessThan(d!.spec.replicas);
      }
    }
  });

  it('scrapes GET /metrics of every Deployment on its health port (else its probes\' port), with the Deployment\'s name as the job', () => {
    type Doc = { apiVersion?: string; kind?: string; metadata?: { name?: string }; spec?: any } | null;
    const docsOf = (f: string) => readFileSync(join(root, 'deploy', 'k8s', f), 'utf8').split(/^---$/m).map((doc) => parse(doc) as Doc);
    const deployments = docsOf('services.yaml').filter((d) => d?.kind === 'Deployment');
    const monitors = docsOf('monitoring.yaml').filter((d) => d?.kind === 'PodMonitor');
    expect(monitors.every((m) => m!.apiVersion === 'monitoring.coreos.com/v1')).toBe(true);
    const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    for (const d of deployments) {
      const name = d!.metadata!.name!;
      const labels = d!.spec.template.metadata.labels as Record<string, string>;
      const selecting = monitors.filter((m) => matches(m!.spec.selector.matchLabels, labels));
      expect(selecting.map((m) => m!.metadata!.name), `${name} is scraped by one PodMonitor`).toEqual([name]);
      const monitor = selecting[0]!;
      expect(labels[monitor.spec.jobLabel], `${name}: the job label is the Deployment's name`).toBe(name);
      const [container] = d!.spec.template.spec.containers as { ports: { name: string }[]; readinessProbe: { httpGet: { port: string } }; livenessProbe: { httpGet: { port: string } } }[];
      const probePort = container!.readinessProbe.httpGet.port;
      expect(container!.livenessProbe.httpGet.port).toBe(probePort);
      const declared = container!.ports.map((p) => p.name);
      expect(declared).toContain(probePort);
      // The health port where the pod declares one (the gateway's public listener is no place for /metrics), else its probes' port.
      const scraped = declared.includes('health') ? 'health' : probePort;
      expect(monitor.spec.podMetricsEndpoints, name).toEqual([expect.objectContaining({ port: scraped, path: '/metrics' })]);
    }
    expect(monitors.length).toBe(deployments.length);
  });

  it('autoscales telemetry ingest on its consumer group’s lag, never past the readings topic’s partitions', () => {
    const docs = readFileSync(join(root, 'deploy', 'k8s', 'services.yaml'), 'utf8')
      .split(/^---$/m)
      .map((doc) => parse(doc) as { kind?: string; metadata?: { name?: string }; data?: Record<string, string>; spec?: any } | null);
    const scaler = docs.find((d) => d?.kind === 'ScaledObject' && d.metadata?.name === 'telemetry-ingest')!;
    expect(scaler.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'telemetry-ingest' });
    const trigger = scaler.spec.triggers.find((t: { type: string }) => t.type === 'kafka');
    expect(trigger.metadata).toMatchObject({ consumerGroup: READINGS_CONSUMER_GROUP, topic: ReadingsTopic.name });
    const partitions = Number(docs.find((d) => d?.kind === 'ConfigMap')!.data!.TELEMETRY_PARTITIONS);
    expect(scaler.spec.maxReplicaCount).toBeLessThanOrEqual(partitions);
    expect(scaler.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(docs.some((d) => d?.kind === 'HorizontalPodAutoscaler' && d.metadata?.name === 'telemetry-ingest')).toBe(false);
  });
});
