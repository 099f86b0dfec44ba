import type { z } from 'zod';
import type { RequestTarget } from '@efs/contracts';
import type { AuthRule } from '../auth/authenticate.ts';

export type Listener = 'public' | 'utility';

/**
 * Routes the gateway answers itself (token issuance) instead of forwarding; they still name the
 * operation they ask of `target` (`sites.get`, `sites.ensure`).
 */
export type GatewayHandlerName = 'site-token' | 'session';

/**
 * One HTTP route of the gateway: where it listens, who may call it, the zod schemas that
 * validate it (and document it in OpenAPI), and the service operation it is forwarded to.
 */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  listener: Listener;
  auth: AuthRule;
  target: RequestTarget;
  op: string;
  summary: string;
  tags: string[];
  /** Set for a route the gateway answers itself (see GatewayHandlerName); otherwise the request is forwarded. */
  gatewayHandler?: GatewayHandlerName;
  schema: {
    params?: z.ZodType;
    querystring?: z.ZodType;
    body?: z.ZodType;
    response: Record<number, z.ZodType>;
  };
}

export const defineRoutes = (routes: RouteDef[]): RouteDef[] => routes;
