#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=1048576 node --max-semi-space-size=4
// --max-semi-space-size=4 (MiB): V8's young generation otherwise grows to 16 MiB per semi-space,
// about 20 MiB of resident memory that a streaming server does not need (idle 132 -> 113 MB, a
// 1 GiB multipart upload's peak 181 -> 147 MB, same CPU per request: docs/performance.md). V8 reads
// it only at start, so every launcher passes it: this line, `npm start`, deploy/Dockerfile, the
// test and bench harnesses.
// MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=1048576 (glibc's allocator; read only when a
// process starts, so set here, in `npm start` and the container image, never by the process
// itself): libvips, libuv and worker threads otherwise get up to 8 malloc arenas per CPU, and every
// freed multi-MB pixel buffer raises glibc's mmap threshold (up to 32 MiB), so later buffers of that
// size come from the arenas, which keep their high-water mark (docs/operations.md "Memory").
if (process.argv[2] === 'serve' && process.env['MALLOC_ARENA_MAX'] === undefined && process.report?.getReport().header.glibcVersionRuntime) {
  process.stderr.write('stowage: MALLOC_ARENA_MAX is not set: under sustained image load glibc keeps far more memory than the server uses; start it with MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=1048576 (docs/operations.md "Memory")\n');
}
// The AWS SDK versions in the lock file support Node 20 (their engines say >=20), but every S3
// client (the blob store, custom storages) warns that versions published after January 2027 will
// need Node 22: noise on each node's stderr about packages this checkout does not use.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
const { main } = await import('../dist/main.js');

await main(process.argv);
