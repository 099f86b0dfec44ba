import { z } from 'zod';
import { Device, SiteRecord, type SiteRecordType } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';

export interface SiteWithDevices {
  site: SiteRecordType;
  devices: z.infer<typeof Device>[];
}

/**
 * Reading a site and its devices straight from commissioning, for services whose read models
 * (fed by the sites and devices topics) have not caught up yet. Answers undefined for a site
 * that does not exist for the integrator; throws ServiceUnavailableError when commissioning does
 * not answer in time or answers otherwise than the contract says.
 */
export async function fetchSiteWithDevices(
  transport: Transport,
  integratorId: string,
  siteId: string,
  opts: { timeoutMs: number; devices?: boolean },
): Promise<SiteWithDevices | undefined> {
  const principal: Principal = { kind: 'SYSTEM', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null };
  const ask = (op: string, query: Record<string, string[]> = {}) =>
    transport.request('commissioning', { op, principal, params: { siteId }, query, body: null }, { timeoutMs: opts.timeoutMs, key: `${integratorId}/${siteId}` });
  const siteReply = await ask('sites.get');
  if (siteReply.status === 404) return undefined;
  if (siteReply.status !== 200) throw new ServiceUnavailableError(`commissioning answered sites.get with ${siteReply.status}`);
  const site = SiteRecord.parse(JSON.parse(siteReply.body ?? 'null'));
  if (opts.devices === false) return { site, devices: [] };
  const devicesReply = await ask('devices.list', { limit: ['1000'] });
  if (devicesReply.status !== 200) throw new ServiceUnavailableError(`commissioning answered devices.list with ${devicesReply.status}`);
  return { site, devices: z.array(Device).parse(JSON.parse(devicesReply.body ?? '[]')) };
}

