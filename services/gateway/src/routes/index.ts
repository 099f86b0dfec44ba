import type { RouteDef } from './route.ts';
import { authRoutes } from './auth.ts';
import { catalogRoutes } from './catalog.ts';
import { commissioningRoutes } from './commissioning.ts';
import { dispatchRoutes } from './dispatch.ts';
import { enrollmentRoutes } from './enrollments.ts';
import { programRoutes } from './programs.ts';
import { telemetryRoutes } from './telemetry.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every route of the gateway; new route files are added here. */
export const allRoutes: readonly RouteDef[] = [...authRoutes, ...programRoutes, ...commissioningRoutes, ...catalogRoutes, ...enrollmentRoutes, ...dispatchRoutes, ...telemetryRoutes, ...webhookRoutes];
