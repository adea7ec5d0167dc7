/**
 * The first bytes of a blob, kept while its bytes stream past (`put`'s `keepHead`): the type
 * sniffing of a new upload reads exactly these, and reading them back from the file cost an
 * access, an open, a read and a close on the thread pool per upload (docs/performance.md).
 */
export class HeadBytes {
  private readonly chunks: Buffer[] = [];
  private kept = 0;

  constructor(private readonly limit: number) {}

  update(chunk: Buffer): void {
    if (this.kept >= this.limit) return;
    // A copy: the stream may reuse its chunk's memory once it has been written.
    const part = Buffer.from(chunk.subarray(0, this.limit - this.kept));
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** The first min(size, limit) bytes. */
  bytes(): Buffer {
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.kept);
  }
}
