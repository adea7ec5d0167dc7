import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (test/reliability/, `npm run test:reliability`): fuzzers, hostile files,
 * SIGKILL rounds, full disk and soak. Separate from `npm test`; STOWAGE_RELIABILITY selects its
 * size (docs/reliability.md). One file at a time: the event-loop probes must not measure the
 * machine being busy with another file's server.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    minWorkers: 1,
    fileParallelism: false,
    pool: 'forks',
    // The S3 client in the test processes (s3rver checks, bucket audits) would print the AWS SDK's
    // notice about its future Node 22 requirement once per file; bin/stowage.js silences it the same way.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
