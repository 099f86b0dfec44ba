import { describe, expect, it } from 'vitest';
import { methodLabel, requestAttributes, statusClass, statusIndex } from '../src/requestMetrics.ts';

describe('request metrics labels', () => {
  it('names a status by its class; a status outside 100..599 counts as a server failure', () => {
    expect([100, 199, 200, 204, 301, 404, 429, 500, 503, 599].map(statusClass)).toEqual(['1xx', '1xx', '2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx', '5xx']);
    expect([0, 42, 600, 999].map(statusClass)).toEqual(['5xx', '5xx', '5xx', '5xx']);
  });

  it('keeps the known methods and folds every other into _OTHER, so a client cannot add label values', () => {
    expect(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map(methodLabel)).toEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
    expect(['get', 'PROPFIND', 'X-SITE-123'].map(methodLabel)).toEqual(['_OTHER', '_OTHER', '_OTHER']);
  });

  it('builds one attribute set per status class of a route, indexed as statusIndex reads it', () => {
    const attrs = requestAttributes({ listener: 'public', service: 'gateway' }, 'GET', '/v1/site/:siteId');
    for (const status of [101, 200, 302, 404, 503, 0, 700]) {
      expect(attrs[statusIndex(status)]).toEqual({ service: 'gateway', listener: 'public', 'http.request.method': 'GET', 'http.route': '/v1/site/:siteId', 'http.response.status_class': statusClass(status) });
    }
    // Without a route (no route matched) and without a service of its own (the health listener).
    expect(requestAttributes({ listener: 'health' }, 'BREW', undefined)[4]).toEqual({ listener: 'health', 'http.request.method': '_OTHER', 'http.response.status_class': '4xx' });
  });
});
