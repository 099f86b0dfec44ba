export { openDatabase } from './database.ts';
export type { Database, DatabaseOptions, Knex } from './database.ts';
export { migrateSchema, createMessagingTables, dropMessagingTables } from './migrate.ts';
export type { Migration } from './migrate.ts';
export { Outbox, processOnce } from './outbox.ts';
export type { Publisher } from './outbox.ts';
