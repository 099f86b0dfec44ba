import { z } from 'zod';
import { bool, parseConfig, positiveInt } from '@efs/config';
import { AUTO_APPROVE_DELAY_MAX_MS } from '@efs/contracts';

const CatalogEnv = z.object({
  /** Seed the sandbox catalog of decisions.md in a fresh deployment. */
  SANDBOX_CATALOG: bool(true),
  /** Delay after which sandbox programs approve a PENDING enrollment (announced with each sandbox program, so bounded like it). */
  SANDBOX_AUTO_APPROVE_DELAY_MS: positiveInt(5000, AUTO_APPROVE_DELAY_MAX_MS),
  /** How long the catalog waits for commissioning when its read model does not know a site yet. */
  CATALOG_COMMISSIONING_TIMEOUT_MS: positiveInt(2000),
  /**
   * A program's creation or change answers once its announcement is on the programs topic (which
   * commissioning answers eligibility from), or after this long, logged: it is committed either way.
   */
  CATALOG_ANNOUNCE_TIMEOUT_MS: positiveInt(2000),
  /** For this long after a site is commissioned its devices may still be arriving, so the catalog reads them through commissioning. */
  CATALOG_SITE_SETTLE_MS: positiveInt(30_000),
});
export type CatalogConfig = z.infer<typeof CatalogEnv>;

export const parseCatalogConfig = (env: Record<string, string | undefined>): CatalogConfig => parseConfig(CatalogEnv, env);
