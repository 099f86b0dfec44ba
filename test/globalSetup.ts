import { ensurePortalBuilt } from '@efs/testing';

/** Once per test run: the gateway's portal listener serves portal/dist, built from the current sources. */
export default function setup(): void {
  ensurePortalBuilt();
}
