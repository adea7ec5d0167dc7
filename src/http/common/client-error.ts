/**
 * Requests Node's HTTP parser refuses before any route sees them (a request line or headers over
 * the 16 KB limit: 431; malformed HTTP: 400; headers or body too slow: 408). Fastify's default
 * answer to them carries no `Connection: close` and then destroys the socket: a keep-alive client
 * takes the answer as an ordinary one, sends its next request on that connection and gets a reset
 * (the Upload API fuzzer's kept-alive form requests, docs/reliability.md). Here the answer says
 * `Connection: close`, and the connection ends with a lingering close, so the client reads the
 * answer instead of a reset and opens a new connection for what follows.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { lingeringClose } from './unread-body.js';

/** The body of the refusal in the surface's error format. */
export type ClientErrorBody = (status: number, message: string) => { contentType: string; body: string };

/** Sockets already answered: the parser, left in its error state, reports every later chunk again. */
const answered = new WeakSet<Socket>();

export function clientErrorHandler(format: ClientErrorBody): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Only when no answer to this request has started going out: a second one would corrupt it.
    const inFlight = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!socket.writable || (inFlight && inFlight.headersSent)) {
      socket.destroy();
      return;
    }
    const { status, message } = refusal(err.code);
    const { contentType, body } = format(status, message);
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    lingeringClose(socket);
  };
}

function refusal(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'Request header fields too large (the request line and headers are limited to 16 KB).' };
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { status: 413, message: 'Chunk extensions too large.' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'The request took too long to arrive.' };
  return { status: 400, message: 'Malformed HTTP request.' };
}
