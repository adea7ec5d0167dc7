/**
 * Answers that go out before their request's body has been read (an early refusal: an unknown
 * key, the anonymous staging budget spent, too many files, a multipart parse error) must reach
 * the client, and must leave the connection usable or close it cleanly.
 *
 * Node drains an unread body by itself only when nothing ever started reading it. A body that
 * was piped into the multipart parser and then dropped stays half-read with the socket paused:
 * the client, still sending, stalls until a timeout resets the connection (ECONNRESET, often
 * before it has read the answer), and a keep-alive client's next request waits behind it.
 *
 * So, when a response is about to go out with its body incomplete:
 *   - a small body (declared Content-Length up to DRAIN_BYTES) is read to its end and discarded,
 *     and the connection stays alive for the next request;
 *   - a larger (or chunked) one gets `Connection: close`; after the answer the server closes its
 *     sending side (FIN) and keeps reading and discarding for up to LINGER_MS or LINGER_BYTES
 *     before it closes the socket. Closing with unread bytes at once would send a reset, which
 *     can discard the answer waiting in the client's receive buffer (a "lingering close").
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Up to this much declared body is drained to keep the connection. */
export const DRAIN_BYTES = 8 * 1024 * 1024;
/** After an answer with `Connection: close`, how long and how much more the server reads before closing. */
export const LINGER_MS = 5_000;
export const LINGER_BYTES = 16 * 1024 * 1024;

export function answerBeforeUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply, payload) => {
    const raw = req.raw;
    if (raw.complete || raw.destroyed || reply.raw.headersSent) return payload;
    const declared = Number(raw.headers['content-length']);
    if (!(Number.isFinite(declared) && declared <= DRAIN_BYTES)) {
      reply.header('connection', 'close');
      lingerInsteadOfDestroy(raw.socket);
    }
    // After the answer: whoever was reading the body (the multipart parser) lets go, and the rest
    // flows to nowhere, so the socket keeps being read.
    reply.raw.once('finish', () => {
      raw.unpipe();
      raw.resume();
    });
    return payload;
  });
}

/**
 * Node closes a `Connection: close` response's socket with destroySoon() once the answer is
 * written: here that becomes a lingering close.
 */
function lingerInsteadOfDestroy(socket: Socket): void {
  socket.destroySoon = function lingeringCloseOnce(this: Socket): void {
    lingeringClose(this);
  };
}

/**
 * Half-closes the socket (FIN after the answer), then keeps reading and discarding what the client
 * still sends for up to LINGER_MS or LINGER_BYTES before closing it: closing at once with unread
 * bytes would send a reset, which can discard the answer waiting in the client's receive buffer.
 */
export function lingeringClose(socket: Socket): void {
  socket.end();
  const start = socket.bytesRead;
  const deadline = Date.now() + LINGER_MS;
  // bytesRead counts at the handle, also while the HTTP parser consumes the socket directly.
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    if (Date.now() >= deadline || socket.bytesRead - start > LINGER_BYTES) {
      clearInterval(timer);
      socket.destroy();
    }
  }, 100);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}
