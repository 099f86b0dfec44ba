import { internalPrincipal } from '@efs/access';
import { CommissioningOperations, type DeviceRecordType, type SiteRecordType } from '@efs/api';
import { siteKey } from '@efs/contracts';
import { AppError, Errors } from '@efs/errors';
import { call, type Transport } from '@efs/messaging';

export interface SiteWithDevices {
  site: SiteRecordType;
  devices: DeviceRecordType[];
}

/**
 * Reading a site and its devices straight from commissioning, for services whose read models
 * (fed by the sites and devices topics) have not caught up yet. Answers undefined for a site
 * that does not exist for the integrator; throws SERVICE_UNAVAILABLE when commissioning does not
 * answer in time or answers otherwise than the contract says.
 */
export async function fetchSiteWithDevices(
  transport: Transport,
  integratorId: string,
  siteId: string,
  opts: { timeoutMs: number; devices?: boolean },
): Promise<SiteWithDevices | undefined> {
  const principal = internalPrincipal(integratorId, siteId);
  const options = { timeoutMs: opts.timeoutMs, key: siteKey(integratorId, siteId) };
  try {
    const site = await call(transport, CommissioningOperations.getSite, { principal, params: { siteId } }, options);
    if (opts.devices === false) return { site, devices: [] };
    const devices = await call(transport, CommissioningOperations.listDevices, { principal, params: { siteId }, query: { limit: 1000 } }, options);
    return { site, devices };
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
    throw Errors.SERVICE_UNAVAILABLE('Commissioning did not answer; retry later', { cause: err });
  }
}
