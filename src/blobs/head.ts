/**
 * The first bytes of a blob, kept while its bytes stream past (`put`'s `keepHead`): the type
 * sniffing of a new upload reads exactly these, and reading them back from the file cost an
 * access, an open, a read and a close on the thread pool per upload (docs/performance.md).
 *
 * Copied once into one buffer of `limit` bytes: a copy per chunk and then a concatenation of the
 * copies allocated and copied a small upload's body twice over (two 64 KiB buffers per 64 KiB
 * upload, about 3 % of the main thread's samples with the garbage they left).
 */
export class HeadBytes {
  private buffer: Buffer | null = null;
  private kept = 0;

  constructor(private readonly limit: number) {}

  update(chunk: Buffer): void {
    if (this.kept >= this.limit) return;
    const take = Math.min(chunk.length, this.limit - this.kept);
    // A copy: the stream may reuse its chunk's memory once it has been written.
    this.buffer ??= Buffer.allocUnsafeSlow(take === this.limit ? take : this.limit);
    chunk.copy(this.buffer, this.kept, 0, take);
    this.kept += take;
  }

  /** The first min(size, limit) bytes. */
  bytes(): Buffer {
    return this.buffer === null ? Buffer.alloc(0) : this.buffer.subarray(0, this.kept);
  }
}
