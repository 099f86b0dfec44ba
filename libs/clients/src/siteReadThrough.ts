import type { DeviceRecordType, SiteRecordType } from '@efs/api';
import type { DeviceMessage, SiteMessage } from '@efs/contracts';
import type { Transport } from '@efs/messaging';
import { fetchSiteWithDevices } from './commissioning.ts';

/** What a read-through found: the site and its devices as the sites and devices topics carry them. */
export type ReadThrough =
  | { outcome: 'found'; site: SiteMessage; devices: DeviceMessage[] }
  /** Commissioning knows no such site of the integrator. */
  | { outcome: 'not_found' }
  /** Commissioning did not answer in time, or not as its contract says. */
  | { outcome: 'unavailable'; error: unknown };

/** A site as commissioning answers it, as its state topic carries it. */
export const siteMessageOf = (integratorId: string, site: SiteRecordType): SiteMessage => ({ ...site, integrator_id: integratorId, deleted: false });

/** A device as commissioning answers it, as its state topic carries it (the reserve as answered). */
export function deviceMessageOf(integratorId: string, device: DeviceRecordType): DeviceMessage {
  const { configuration, ...fields } = device;
  return { ...fields, integrator_id: integratorId, reserve_percentage: configuration.reserve_percentage, deleted: false };
}

/**
 * The one read-through to commissioning, for services whose read models of sites and devices
 * (fed by the sites and devices topics) have not caught up yet: asks for the site (`sites.get`)
 * and, unless `devices` is false, its devices (`devices.list`), and answers them in the shape of
 * the topics' messages, so that a read model applies them as it applies a message (never an
 * older state over a newer one). It never throws.
 */
export async function readSiteThrough(transport: Transport, integratorId: string, siteId: string, opts: { timeoutMs: number; devices?: boolean }): Promise<ReadThrough> {
  try {
    const found = await fetchSiteWithDevices(transport, integratorId, siteId, opts);
    if (!found) return { outcome: 'not_found' };
    return { outcome: 'found', site: siteMessageOf(integratorId, found.site), devices: found.devices.map((d) => deviceMessageOf(integratorId, d)) };
  } catch (error) {
    return { outcome: 'unavailable', error };
  }
}
