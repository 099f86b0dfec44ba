export * from './common.ts';
export * from './programs.ts';
export * from './sites.ts';
export * from './devices.ts';
export * from './commissioning.ts';
export * from './enrollments.ts';
export * from './auth.ts';
