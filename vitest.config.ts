import { defineConfig } from 'vitest/config';

// One run, four tiers told apart by where a test lives:
//   unit     *.unit.test.ts anywhere: pure rules, no infrastructure
//   service  services/*/test, libs/*/test (not unit): real Postgres
//   system   test/: the whole service over HTTP; test/distributed needs Kafka and the registry;
//            test/browser drives Debian's Chromium against the portal (needs /usr/bin/chromium)
// Tiers whose infrastructure is missing skip with a line saying what to start, except in CI.
export default defineConfig({
  test: {
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts', 'portal/src/**/*.unit.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: files run in parallel, but the distributed tests run alone (see test/distributed).
    fileParallelism: true,
    maxWorkers: 2,
    pool: 'forks',
    reporters: ['default'],
  },
});
