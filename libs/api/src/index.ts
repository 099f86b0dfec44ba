export * from './common.ts';
export * from './programs.ts';
export * from './enrollments.ts';
export * from './auth.ts';
