import { CommissioningOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import { siteIntegratorOf } from '@efs/access';
import type { CommissioningContext } from '../context.ts';
import { toDeviceRecord } from '../domain/device.ts';

/** `GET /v1/site/{siteId}/devices` (site token), also asked by the catalog when its read model lags. */
export const listDevices = ({ store }: Pick<CommissioningContext, 'store'>) =>
  implement(CommissioningOperations.listDevices, async ({ params, query, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    if (!(await store.getSite(integratorId, params.siteId))) throw Errors.NOT_FOUND(`Site ${params.siteId} not found`);
    const devices = await store.listDevices(integratorId, params.siteId, query);
    return devices.map(toDeviceRecord);
  });
