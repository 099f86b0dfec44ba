export { fetchSiteWithDevices } from './commissioning.ts';
export type { SiteWithDevices } from './commissioning.ts';
export { readSiteThrough, siteMessageOf, deviceMessageOf } from './siteReadThrough.ts';
export type { ReadThrough } from './siteReadThrough.ts';
