import { defineTopic } from './topic.ts';

/** Who is asking: set by the gateway after authentication, trusted by every service. */
const Principal = {
  type: 'record',
  name: 'Principal',
  namespace: 'efs.messaging',
  fields: [
    {
      name: 'kind',
      type: {
        type: 'enum',
        name: 'PrincipalKind',
        namespace: 'efs.messaging',
        symbols: ['CLIENT', 'SITE', 'PORTAL_SESSION', 'UTILITY', 'SYSTEM'],
      },
    },
    { name: 'integrator_id', type: ['null', 'string'], default: null },
    { name: 'utility_id', type: ['null', 'string'], default: null },
    { name: 'site_id', type: ['null', 'string'], default: null },
    { name: 'token_id', type: ['null', 'string'], default: null },
  ],
} as const;

/**
 * A request from the gateway to a service. The operation names the handler; path parameters,
 * query and the already validated body travel with it. The body is the JSON text of the HTTP
 * body: it was validated against the route's zod schema at the edge, and each operation's
 * handler parses it with the same schema again.
 */
const RequestSchema = {
  type: 'record',
  name: 'Request',
  namespace: 'efs.messaging',
  fields: [
    { name: 'op', type: 'string' },
    { name: 'principal', type: Principal },
    { name: 'params', type: { type: 'map', values: 'string' } },
    { name: 'query', type: { type: 'map', values: { type: 'array', items: 'string' } } },
    { name: 'body', type: ['null', 'string'], default: null },
  ],
} as const;

/** A service's answer: an HTTP-like status and the JSON text of the response or error body. */
const ReplySchema = {
  type: 'record',
  name: 'Reply',
  namespace: 'efs.messaging',
  fields: [
    { name: 'status', type: 'int' },
    { name: 'body', type: ['null', 'string'], default: null },
  ],
} as const;

function requestTopic<const N extends string>(service: N) {
  return defineTopic({
    name: `efs.${service}.requests`,
    kind: 'request',
    partitions: 6,
    retentionMs: 60 * 60 * 1000,
    schema: RequestSchema,
  });
}

/** Request topics, one per service that answers the gateway. */
export const RequestTopics = {
  catalog: requestTopic('catalog'),
  commissioning: requestTopic('commissioning'),
  enrollment: requestTopic('enrollment'),
  dispatch: requestTopic('dispatch'),
  telemetry: requestTopic('telemetry'),
  webhooks: requestTopic('webhooks'),
} as const;

export type RequestTarget = keyof typeof RequestTopics;

/**
 * Replies go to a topic of the calling gateway instance (`efs.gateway.replies.<instance>`);
 * all of them share one subject so that instances do not multiply registry subjects.
 */
export const ReplyTopic = defineTopic({
  name: 'efs.gateway.replies',
  subject: 'efs.gateway.replies-value',
  kind: 'reply',
  partitions: 1,
  retentionMs: 10 * 60 * 1000,
  schema: ReplySchema,
});

export function replyTopicName(instanceId: string): string {
  return `${ReplyTopic.name}.${instanceId}`;
}
