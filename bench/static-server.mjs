// The "bare node:http" baseline: stat + stream a file from a directory, nothing else.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [dir, port] = process.argv.slice(2);
http.createServer((req, res) => {
  const file = path.join(dir, path.basename(req.url.split('?')[0]));
  fs.stat(file, (err, st) => {
    if (err) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
    fs.createReadStream(file).pipe(res);
  });
}).listen(Number(port), '127.0.0.1', () => console.log('listening'));
