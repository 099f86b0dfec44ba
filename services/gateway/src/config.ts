import { z } from 'zod';
import { optionalString, parseConfig, port, positiveInt } from '@efs/config';

const GatewayEnv = z.object({
  HOST: z.string().default('127.0.0.1'),
  /** Public API (Cloud API and Mobile App API). */
  PORT: port(8080),
  UTILITY_PORT: port(8081),
  PORTAL_PORT: port(8082),
  /** Public address of the portal listener, used in the portal_url of sessions. */
  PORTAL_URL: optionalString(),
  /** Milliseconds the gateway waits for a service's reply before answering 503. */
  REQUEST_TIMEOUT_MS: positiveInt(5000),
  BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
  /** Registered at start as the sandbox integrator's client token when set. */
  SANDBOX_CLIENT_TOKEN: optionalString(),
  /** Registered at start as the sandbox utility's API key when set. */
  SANDBOX_UTILITY_API_KEY: optionalString(),
  /** Identifies this replica (its reply topic); defaults to host name plus random suffix. */
  GATEWAY_INSTANCE_ID: optionalString(),
});
export type GatewayConfig = z.infer<typeof GatewayEnv>;

export const parseGatewayConfig = (env: Record<string, string | undefined>): GatewayConfig => parseConfig(GatewayEnv, env);
