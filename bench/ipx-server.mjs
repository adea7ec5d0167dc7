// ipx serving a directory through its own node listener (its defaults, as a user would run it).
import http from 'node:http';
import { createIPX, createIPXNodeServer, ipxFSStorage } from 'ipx';

const [dir, port] = process.argv.slice(2);
const ipx = createIPX({ storage: ipxFSStorage({ dir }) });
http.createServer(createIPXNodeServer(ipx)).listen(Number(port), '127.0.0.1', () => console.log('listening'));
