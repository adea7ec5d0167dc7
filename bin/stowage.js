#!/usr/bin/env node
// The AWS SDK versions in the lock file support Node 20 (their engines say >=20), but every S3
// client (the blob store, custom storages) warns that versions published after January 2027 will
// need Node 22: noise on each node's stderr about packages this checkout does not use.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
const { main } = await import('../dist/main.js');

await main(process.argv);
