import { metrics, type Attributes, type Meter } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { ScrapeGauges, type ScrapeCallback } from './scrapeGauges.ts';

export type { Attributes, BatchObservableResult, Counter, Histogram, Meter, ObservableGauge, ObservableResult } from '@opentelemetry/api';

/**
 * Bucket bounds of every duration histogram, in seconds (the OpenTelemetry HTTP semantic
 * conventions' advice): the SDK's default bounds are meant for milliseconds.
 */
export const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** A histogram of durations in seconds (unit `s`), with the given bucket bounds (SECONDS_BUCKETS unless said). */
export const secondsHistogram = (name: string, description: string, bounds: number[] = SECONDS_BUCKETS): ReturnType<Meter['createHistogram']> =>
  meter().createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: bounds } });

/** How long a scrape waits for the observable gauges' callbacks (the outbox queries) before it answers without them. */
const COLLECT_TIMEOUT_MS = 3000;

let exporter: PrometheusExporter | undefined;
const scrapeGauges = new ScrapeGauges();
let processService = 'efs';
// Scope labels (otel_scope_name) on every series say nothing an alert needs: left out.
const serializer = new PrometheusSerializer(undefined, false, undefined, false, true);

/**
 * Starts the process's metrics, once: a meter provider whose only reader answers Prometheus
 * scrapes (`scrapeMetrics`, served by the health listener on GET /metrics; the exporter opens no
 * port of its own), and Node's runtime metrics (event-loop delay, heap, GC) from
 * @opentelemetry/instrumentation-runtime-node. It stays for the life of the process: a pull
 * reader holds nothing to flush, and a test that starts a second system in the same process
 * keeps counting into it. `service` names the process (a service's name in distributed mode,
 * `efs` for the main command): series that carry no `service` of their own are labelled with it.
 */
export function initMetrics(opts: { service: string }): void {
  if (exporter) return;
  processService = opts.service;
  exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true, metricProducers: [scrapeGauges] });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': `efs-${opts.service}` }), readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);
  // Enabled by its constructor; its instruments are made only once it is handed a provider.
  new RuntimeNodeInstrumentation({ monitoringPrecision: 100 }).setMeterProvider(provider);
}

/**
 * The project's meter. Instruments come from it once metrics have started (a service creates
 * its instruments when it is built, after startProcess called initMetrics); before, or where
 * nothing started them (unit tests), it is OpenTelemetry's no-op meter.
 */
export const meter = (): Meter => metrics.getMeter('efs');

/**
 * Reads gauges at every scrape through `callback` (see ScrapeGauges: a series not observed in a
 * scrape is absent from it, unlike the SDK's observable gauges, which repeat the last value of
 * every attribute set they saw). Answers the function that stops reading them. Before metrics
 * start, or without them (unit tests), nothing calls it.
 */
export const addScrapeGauges = (callback: ScrapeCallback): (() => void) => scrapeGauges.add(callback);

/**
 * The Prometheus text of every instrument now. A callback that fails or outlasts the timeout
 * leaves its series out of this scrape (and is handed to `onErrors`); the scrape itself still
 * answers.
 */
export async function scrapeMetrics(onErrors?: (errors: unknown[]) => void): Promise<string> {
  if (!exporter) return '# metrics not started\n';
  const { resourceMetrics, errors } = await exporter.collect({ timeoutMillis: COLLECT_TIMEOUT_MS });
  if (errors.length > 0) onErrors?.(errors);
  return serializer.serialize(withDefaultAttribute(resourceMetrics, 'service', processService));
}

/** Every data point labelled `key` = `value` unless it has a `key` of its own (new attribute objects: the SDK's are left as they are). */
export function withDefaultAttribute(rm: ResourceMetrics, key: string, value: string): ResourceMetrics {
  for (const scope of rm.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints as { attributes: Attributes }[]) {
        if (!(key in point.attributes)) point.attributes = { [key]: value, ...point.attributes };
      }
    }
  }
  return rm;
}
