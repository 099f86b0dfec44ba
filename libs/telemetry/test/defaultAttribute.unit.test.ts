import { describe, expect, it } from 'vitest';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { withDefaultAttribute } from '../src/metrics.ts';

describe('withDefaultAttribute', () => {
  it('labels the points that have no such attribute and leaves the others and the SDK objects as they were', () => {
    const own = { service: 'gateway', listener: 'public' };
    const none = { 'db.client.connection.state': 'used' };
    const rm = { resource: {}, scopeMetrics: [{ scope: { name: 'efs' }, metrics: [{ dataPoints: [{ attributes: own }, { attributes: none }] }] }] } as unknown as ResourceMetrics;
    withDefaultAttribute(rm, 'service', 'efs');
    const points = rm.scopeMetrics[0]!.metrics[0]!.dataPoints;
    expect(points.map((p) => p.attributes)).toEqual([own, { service: 'efs', 'db.client.connection.state': 'used' }]);
    expect(points[0]!.attributes).toBe(own);
    expect(none).toEqual({ 'db.client.connection.state': 'used' });
  });
});
