#!/usr/bin/env -S node --max-semi-space-size=4
// --max-semi-space-size=4 (MiB): V8's young generation otherwise grows to 16 MiB per semi-space,
// about 20 MiB of resident memory that a streaming server does not need (idle 132 -> 113 MB, a
// 1 GiB multipart upload's peak 181 -> 147 MB, same CPU per request: docs/performance.md). V8 reads
// it only at start, so every launcher passes it: this line, `npm start`, deploy/Dockerfile, the
// test and bench harnesses.
// The AWS SDK versions in the lock file support Node 20 (their engines say >=20), but every S3
// client (the blob store, custom storages) warns that versions published after January 2027 will
// need Node 22: noise on each node's stderr about packages this checkout does not use.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
const { main } = await import('../dist/main.js');

await main(process.argv);
