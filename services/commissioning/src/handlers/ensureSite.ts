import { SiteEnsureRequest, type SiteEnsureResponseType } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { Commissioner } from '../commissioner.ts';
import { integratorOf } from '../domain/access.ts';
import { toDeviceRecord } from '../domain/device.ts';
import { toSiteRecord } from '../domain/site.ts';
import type { CommissioningStore } from '../store/commissioningStore.ts';

/**
 * Internal op `sites.ensure` (for `POST /v1/sessions`): an unknown site is commissioned from the
 * body (as `POST /v1/commission` with `can_auto_enroll` false); an existing one is reused as it
 * is, so `site.id` alone is enough and the body's other fields and devices are ignored.
 */
export const ensureSite = (store: CommissioningStore, c: Commissioner) =>
  operation({
    body: SiteEnsureRequest,
    async handle({ body, principal }): Promise<{ body: SiteEnsureResponseType }> {
      const integratorId = integratorOf(principal);
      const existing = async () => {
        const site = await store.getSite(integratorId, body.site.id);
        return site ? { created: false, site: toSiteRecord(site), devices: (await store.listDevices(integratorId, site.id, { skip: 0, limit: 1000 })).map(toDeviceRecord) } : undefined;
      };
      const found = await existing();
      if (found) return { body: found };
      try {
        const { site, devices } = await c.createSite(integratorId, body.site, body.devices ?? []);
        return { body: { created: true, site: toSiteRecord(site), devices: devices.map(toDeviceRecord) } };
      } catch (err) {
        // A concurrent request created the site first: reuse it. A device id taken elsewhere stays a 409.
        if (err instanceof AppError && err.code === 'CONFLICT') {
          const raced = await existing();
          if (raced) return { body: raced };
        }
        throw err;
      }
    },
  });
