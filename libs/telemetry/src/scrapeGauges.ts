import { ValueType, type Attributes } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type CollectionResult, type GaugeMetricData, type MetricCollectOptions, type MetricProducer } from '@opentelemetry/sdk-metrics';

/** A gauge read at scrape time: its OpenTelemetry name (the unit in it, as the service's own series have), help text and unit. */
export interface ScrapeGauge {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
}

/** Records a gauge's value for one attribute set in this scrape. */
export type ObserveGauge = (gauge: ScrapeGauge, value: number, attributes: Attributes) => void;

/** Reads what it reports when a scrape comes; may be async. */
export type ScrapeCallback = (observe: ObserveGauge) => Promise<void> | void;

/** How long a scrape waits for one callback when the collection gives no timeout. */
const DEFAULT_TIMEOUT_MS = 3000;

const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/**
 * Gauges read at each scrape and kept nowhere between scrapes: a series a callback does not
 * observe in a scrape is absent from it, and a callback that fails or outlasts the collection's
 * timeout leaves all of its series out (its error goes with the scrape's errors). The SDK's
 * observable gauges do otherwise under the cumulative temporality the Prometheus exporter asks
 * for: they export again the last value of every attribute set they ever observed, so a
 * partition another replica took over, or an outbox whose query did not answer, would show an
 * old value for ever. A MetricProducer of the exporter (initMetrics), beside the SDK's own.
 */
export class ScrapeGauges implements MetricProducer {
  private readonly callbacks = new Set<ScrapeCallback>();

  /** Adds a callback read at every scrape; answers the function that removes it. */
  add(callback: ScrapeCallback): () => void {
    this.callbacks.add(callback);
    return () => this.callbacks.delete(callback);
  }

  async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const timeoutMs = options?.timeoutMillis ?? DEFAULT_TIMEOUT_MS;
    const byName = new Map<string, { gauge: ScrapeGauge; points: { attributes: Attributes; value: number }[] }>();
    const errors: unknown[] = [];
    await Promise.all(
      [...this.callbacks].map(async (callback) => {
        const observed: [ScrapeGauge, number, Attributes][] = [];
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`a scrape-time gauge callback did not answer within ${timeoutMs} ms`)), timeoutMs)));
        try {
          await Promise.race([callback((gauge, value, attributes) => observed.push([gauge, value, attributes])), late]);
        } catch (err) {
          errors.push(err);
          return;
        } finally {
          clearTimeout(timer);
        }
        for (const [gauge, value, attributes] of observed) {
          let entry = byName.get(gauge.name);
          if (!entry) byName.set(gauge.name, (entry = { gauge, points: [] }));
          entry.points.push({ attributes, value });
        }
      }),
    );
    const now = hrTime(Date.now());
    const metrics: GaugeMetricData[] = [...byName.values()].map(({ gauge, points }) => ({
      descriptor: { name: gauge.name, description: gauge.description, unit: gauge.unit, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.GAUGE,
      dataPoints: points.map((p) => ({ startTime: now, endTime: now, attributes: p.attributes, value: p.value })),
    }));
    return { resourceMetrics: { resource: resourceFromAttributes({}), scopeMetrics: [{ scope: { name: 'efs' }, metrics }] }, errors };
  }
}
