import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite has its own config and script (vitest.reliability.config.ts).
    exclude: [...configDefaults.exclude, 'test/reliability/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites start real server processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    minWorkers: 1,
    pool: 'forks',
  },
});
