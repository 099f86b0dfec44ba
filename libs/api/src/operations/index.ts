export { CatalogOperations } from './catalog.ts';
export { CommissioningOperations } from './commissioning.ts';
export { DispatchOperations } from './dispatch.ts';
export { EnrollmentOperations, AutoEnrollRequest, type AutoEnrollRequestType } from './enrollment.ts';
export { TelemetryOperations, ReadingIngestOperations } from './telemetry.ts';
export { WebhooksOperations } from './webhooks.ts';
