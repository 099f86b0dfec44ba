import { integratorOf } from '@efs/access';
import { CommissioningOperations } from '@efs/api';
import { AppError } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { toDeviceRecord } from '../domain/device.ts';
import { toSiteRecord } from '../domain/site.ts';

/**
 * Internal operation (for `POST /v1/sessions`): an unknown site is commissioned from the body (as
 * `POST /v1/commission` with `can_auto_enroll` false); an existing one is reused, so `site.id`
 * alone is enough, with the site fields given applied as a site update and the devices not yet
 * known added.
 */
export const ensureSite = ({ store, writer }: Pick<CommissioningContext, 'store' | 'writer'>) =>
  implement(CommissioningOperations.ensureSite, async ({ body, principal }) => {
    const integratorId = integratorOf(principal);
    const reuse = async () => {
      const reused = await writer.reuseSite(integratorId, body.site, body.devices ?? []);
      return reused ? { created: false, site: toSiteRecord(reused.site), devices: (await store.listDevices(integratorId, reused.site.id, { skip: 0, limit: 1000 })).map(toDeviceRecord) } : undefined;
    };
    const found = await reuse();
    if (found) return found;
    try {
      const { site, devices } = await writer.createSite(integratorId, body.site, body.devices ?? []);
      return { created: true, site: toSiteRecord(site), devices: devices.map(toDeviceRecord) };
    } catch (err) {
      // A concurrent request created the site first: reuse it. A device id taken elsewhere stays a 409.
      if (err instanceof AppError && err.code === 'CONFLICT') {
        const raced = await reuse();
        if (raced) return raced;
      }
      throw err;
    }
  });
