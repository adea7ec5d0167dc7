import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites start real server processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    minWorkers: 1,
    pool: 'forks',
  },
});
