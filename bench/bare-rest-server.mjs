// The REST floor: a bare Fastify route answering GET /files/:uuid/ (or the route given) with the JSON Stowage gave for
// the same file (read once at start), sent the way Stowage sends it (a Buffer, application/json).
import fs from 'node:fs';
import Fastify from 'fastify';

const [jsonFile, port, route = '/files/:uuid/'] = process.argv.slice(2);
const body = fs.readFileSync(jsonFile, 'utf8');
const app = Fastify({ logger: false });
app.get(route, async (_req, reply) => reply.code(200).header('content-type', 'application/json').send(Buffer.from(body)));
await app.listen({ host: '127.0.0.1', port: Number(port) });
console.log('listening');
