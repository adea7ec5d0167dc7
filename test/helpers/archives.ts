/**
 * Reading archives the tests receive (group zips, OOXML and ODF documents): every entry with its
 * bytes, in archive order.
 */
import yauzl from 'yauzl';

export async function unzip(buf: Buffer): Promise<Array<[string, Buffer]>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(buf, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))));
  const out: Array<[string, Buffer]> = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          out.push([entry.fileName, Buffer.concat(chunks)]);
          zip.readEntry();
        });
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return out;
}
