export { fetchSiteWithDevices } from './commissioning.ts';
export type { SiteWithDevices } from './commissioning.ts';
