export * from './infra.ts';
export * from './database.ts';
export * from './http.ts';
export * from './sandbox.ts';
export * from './fixtures.ts';
export * from './portal.ts';
export * from './scrape.ts';
