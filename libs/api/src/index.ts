export * from './common.ts';
export * from './programs.ts';
