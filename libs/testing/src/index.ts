export * from './infra.ts';
export * from './database.ts';
export * from './http.ts';
export * from './system.ts';
export * from './distributed.ts';
