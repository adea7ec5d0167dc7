// The S3 upload bench's client ceiling: an S3 endpoint that does nothing. It answers the calls an
// aws-cli `s3 cp` makes (PutObject; CreateMultipartUpload, UploadPart, CompleteMultipartUpload)
// and drains each body without checking a signature, hashing, writing or recording anything. An
// aws-cli upload to it takes what aws-cli itself takes (start-up, reading and hashing the file,
// signing, sending), so no server can make aws-cli faster than it is against this one.
import http from 'node:http';

const [port] = process.argv.slice(2);
const ETAG = '"d41d8cd98f00b204e9800998ecf8427e"';
const xml = (body) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;

http
  .createServer((req, res) => {
    const url = new URL(req.url, 'http://sink');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = rest.join('/');
    req.resume();
    req.once('end', () => {
      if (req.method === 'POST' && url.searchParams.has('uploads')) {
        res.writeHead(200, { 'content-type': 'application/xml' });
        return res.end(xml(`<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><UploadId>sink</UploadId></InitiateMultipartUploadResult>`));
      }
      if (req.method === 'POST' && url.searchParams.has('uploadId')) {
        res.writeHead(200, { 'content-type': 'application/xml' });
        return res.end(xml(`<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><ETag>${ETAG}</ETag></CompleteMultipartUploadResult>`));
      }
      if (req.method === 'PUT') {
        res.writeHead(200, { etag: ETAG, 'content-length': '0' });
        return res.end();
      }
      res.writeHead(400, { 'content-length': '0' });
      res.end();
    });
  })
  .listen(Number(port), '127.0.0.1', () => console.log('listening'));
