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
    // The S3 client in the test processes (s3rver checks, bucket audits) would print the AWS SDK's
    // notice about its future Node 22 requirement once per file; bin/stowage.js silences it the same way.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
