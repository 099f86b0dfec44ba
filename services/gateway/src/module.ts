import type { ServiceModule } from '@efs/runtime';
import { migrations } from '../migrations/index.ts';
import { parseGatewayConfig, type GatewayConfig } from './config.ts';
import { AUTH_SCHEMA, createGatewayService, type GatewayService } from './service.ts';

export const gateway: ServiceModule<GatewayConfig, GatewayService> = {
  name: 'gateway',
  schema: AUTH_SCHEMA,
  migrations,
  config: parseGatewayConfig,
  create: createGatewayService,
  // A replica's reply topic is named after the replica. Its listeners answer /healthz and /readyz
  // too; /metrics only on the process's health port, which is not exposed outside.
  replyInstanceId: (config) => config.GATEWAY_INSTANCE_ID,
};

// What the command-line tool uses to manage credentials and signing keys in the auth schema.
export { AUTH_SCHEMA } from './service.ts';
export { KnexCredentialStore } from './auth/credentialStore.ts';
export { revokeSigningKey, rotateSigningKey } from './auth/signingKeys.ts';
export { KeyEncryption } from '@efs/db';
// And to configure integrators' portals (efs portal frame-ancestors | branding).
export { SANDBOX_INTEGRATOR_ID } from './service.ts';
export { Branding, BRANDING_FIELDS, type BrandingField } from './portal/branding.ts';
export { parseFrameOrigins } from './portal/framing.ts';
export { KnexPortalSettingsStore, type BrandingChange } from './portal/portalSettingsStore.ts';
// And to manage OpenADR 3 clients (efs openadr client create | list | revoke).
export { KnexOpenAdrClientStore, type OpenAdrClient } from './openadr/clientStore.ts';
// And integrators' standalone portals (efs portal oidc set | show | unset).
export { KnexPortalOidcStore, OidcSettingsInput, type OidcSettings } from './portal/oidcSettingsStore.ts';
export { STANDALONE_PATHS } from './portal/standalonePaths.ts';
