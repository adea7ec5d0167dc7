import { configDefaults, defineConfig } from 'vitest/config';

const onPostgres = /^postgres/.test(process.env['STOWAGE_DATABASE_URL'] ?? '');
const onS3 = /^(1|true|yes)$/i.test(process.env['STOWAGE_TEST_S3'] ?? '');

/**
 * Suites that never use the configured metadata store or blob store (pixel pipelines, parsers,
 * pure functions; blobs/contract starts its own disk and S3 stores): on PostgreSQL or S3 they would
 * only repeat the SQLite run, so those runs leave them out.
 */
const STORE_FREE = [
  'test/architecture.test.ts', 'test/config-doc.test.ts', 'test/helpers/**', 'test/media/**', 'test/core/**', 'test/launcher/**', 'test/net/**',
  'test/auth/upload-credentials.test.ts', 'test/auth/verified-signatures.test.ts', 'test/blobs/contract.test.ts', 'test/webhooks/signature.test.ts',
  'test/http/response-check.test.ts', 'test/s3/bucket-part-failure.test.ts',
];
/**
 * Suites whose subject is not stored bytes (signatures, HTTP edge cases, webhooks, jobs, the
 * dashboard and the widget, key administration, metadata-only add-ons, list cursors): the S3 run
 * leaves them out; it covers every suite that writes, copies, serves, sweeps or converts files.
 * (files/pagination uploads hundreds of files to page through them: 17 s on disk, 330 s on s3rver.)
 * s3/clients runs the S3 command-line clients against the S3 API: its subject is their protocol, and
 * the S3 API's reads and writes over object storage are covered by the other s3/ suites.
 */
const NOT_ABOUT_BYTES = [
  'test/auth/**', 'test/http/**', 'test/webhooks/**', 'test/jobs/**', 'test/dashboard/**', 'test/widget/**', 'test/db/**',
  'test/cli/cli.test.ts', 'test/files/pagination.test.ts', 'test/files/counters.test.ts', 'test/addons/clamav.test.ts', 'test/addons/rekognition.test.ts', 'test/addons/labels-search.test.ts', 'test/addons/sdk.test.ts',
  'test/s3/clients.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite has its own config and script (vitest.reliability.config.ts).
    exclude: [
      ...configDefaults.exclude,
      'test/reliability/**',
      ...(onPostgres || onS3 ? STORE_FREE : []),
      ...(onS3 ? NOT_ABOUT_BYTES : []),
    ],
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
