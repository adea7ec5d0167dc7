/**
 * The strace helper joins the two halves of a call that another thread interrupted. Without it, a
 * failed open split in two counted as a second open of an upload's file (durable-bytes failed so
 * under CI's load: the "unfinished" half names the file, the "resumed" half holds the ENOENT).
 */
import { describe, expect, it } from 'vitest';
import { wholeCalls } from '../helpers/strace.js';

const path = '/tmp/stowage-test-x/blobs/files/10/10e08a69-54cf-497b-a556-92e95281a6dc';

describe('wholeCalls', () => {
  it('joins an unfinished call with its resumed result on the same thread, at the place it finished', () => {
    const lines = wholeCalls([
      `10176 openat(AT_FDCWD</w>, "${path}", O_WRONLY|O_CREAT|O_EXCL, 0666 <unfinished ...>`,
      `10175 fsync(29</tmp/other>) = 0`,
      `10176 <... openat resumed>) = -1 ENOENT (No such file or directory)`,
      `10176 openat(AT_FDCWD</w>, "${path}", O_WRONLY|O_CREAT|O_EXCL, 0666) = 30<${path}>`,
    ]);
    expect(lines).toEqual([
      `10175 fsync(29</tmp/other>) = 0`,
      `10176 openat(AT_FDCWD</w>, "${path}", O_WRONLY|O_CREAT|O_EXCL, 0666) = -1 ENOENT (No such file or directory)`,
      `10176 openat(AT_FDCWD</w>, "${path}", O_WRONLY|O_CREAT|O_EXCL, 0666) = 30<${path}>`,
    ]);
    expect(lines.filter((l) => l.includes(`${path}"`) && !/ENOENT/.test(l))).toHaveLength(1);
  });

  it('keeps halves of different threads apart, and leaves a resumed line with no start as it is', () => {
    const lines = wholeCalls([
      `1 fsync(3</a> <unfinished ...>`,
      `2 fsync(4</b> <unfinished ...>`,
      `3 <... fsync resumed>) = 0`,
      `2 <... fsync resumed>) = 0`,
      `1 <... fsync resumed>) = -1 EIO (Input/output error)`,
    ]);
    expect(lines).toEqual([`3 <... fsync resumed>) = 0`, `2 fsync(4</b>) = 0`, `1 fsync(3</a>) = -1 EIO (Input/output error)`]);
  });
});
