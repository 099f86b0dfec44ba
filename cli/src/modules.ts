import type { ServiceModule } from '@efs/runtime';
import { programCatalog } from '@efs/program-catalog';
import { commissioningModule } from '@efs/commissioning';
import { enrollmentModule } from '@efs/enrollment';
import { dispatchModule } from '@efs/event-dispatch';
import { telemetryModule } from '@efs/telemetry-ingest';
import { webhooksModule } from '@efs/webhooks';
import { gateway } from '@efs/gateway';

/** The back-end services, in start order; the gateway starts last, once they serve. */
export const backendModules: readonly ServiceModule<any>[] = [programCatalog, commissioningModule, enrollmentModule, dispatchModule, telemetryModule, webhooksModule];
export const gatewayModule = gateway;
export const allModules: readonly ServiceModule<any>[] = [...backendModules, gateway];
