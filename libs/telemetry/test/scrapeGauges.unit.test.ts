import { describe, expect, it } from 'vitest';
import { addScrapeGauges, initMetrics, scrapeMetrics } from '../src/metrics.ts';
import { ScrapeGauges } from '../src/scrapeGauges.ts';

const DEPTH = { name: 'efs.test.queue.depth', description: 'Items waiting', unit: '{item}' };

describe('ScrapeGauges', () => {
  it('reports what each scrape observed and nothing it did not, leaving out a callback that fails or does not answer', async () => {
    const gauges = new ScrapeGauges();
    let queues = ['a', 'b'];
    gauges.add((observe) => {
      for (const q of queues) observe(DEPTH, q.length, { queue: q });
    });
    gauges.add(async () => {
      throw new Error('database down');
    });
    gauges.add(() => new Promise<void>(() => {}));
    const first = await gauges.collect({ timeoutMillis: 50 });
    expect(first.errors.map((e) => (e as Error).message)).toEqual(['database down', 'a scrape-time gauge callback did not answer within 50 ms']);
    const points = (r: typeof first) => r.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => m.dataPoints.map((p) => [m.descriptor.name, p.attributes, p.value])));
    expect(points(first)).toEqual([
      ['efs.test.queue.depth', { queue: 'a' }, 1],
      ['efs.test.queue.depth', { queue: 'b' }, 1],
    ]);
    queues = ['a'];
    expect(points(await gauges.collect({ timeoutMillis: 50 }))).toEqual([['efs.test.queue.depth', { queue: 'a' }, 1]]);
  });

  it('are served by the process\'s scrape as gauges, until removed', async () => {
    initMetrics({ service: 'scrape-gauges-test' });
    const remove = addScrapeGauges((observe) => observe(DEPTH, 7, { queue: 'q' }));
    const text = await scrapeMetrics();
    expect(text).toContain('# TYPE efs_test_queue_depth gauge');
    expect(text).toContain('efs_test_queue_depth{service="scrape-gauges-test",queue="q"} 7');
    remove();
    expect(await scrapeMetrics()).not.toContain('efs_test_queue_depth');
  });
});
