/**
 * A minimal clamd client (clamd(8) protocol): INSTREAM scans a file's bytes sent in length-prefixed
 * chunks, PING and VERSION check the daemon. The scan runs in clamd (another process), so nothing
 * heavy happens on the event loop; every call is bounded by a signal.
 */
import fs from 'node:fs';
import net from 'node:net';

export type ClamdAddress = { path: string } | { host: string; port: number };

/** `/run/clamav/clamd.ctl`, `unix:/path`, `host:port` or `tcp://host:port`. */
export function parseClamdAddress(text: string): ClamdAddress {
  const t = text.trim();
  if (t.startsWith('unix:')) return { path: t.slice(5) };
  if (t.startsWith('/') || t.startsWith('.')) return { path: t };
  const m = /^(?:tcp:\/\/)?(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/.exec(t);
  if (!m) throw new Error(`clamd address "${text}" is neither a socket path nor host:port`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export const describeAddress = (a: ClamdAddress): string => ('path' in a ? a.path : `${a.host}:${a.port}`);

export type ScanVerdict = { infected: false } | { infected: true; signature: string };

/** Errors reaching or talking to clamd (the message names the address). */
export class ClamdError extends Error {}

function connect(address: ClamdAddress, signal: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = 'path' in address ? net.createConnection({ path: address.path }) : net.createConnection({ host: address.host, port: address.port });
    const onAbort = () => socket.destroy(new ClamdError(`clamd at ${describeAddress(address)} did not answer in time`));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => signal.removeEventListener('abort', onAbort));
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (err: NodeJS.ErrnoException) => reject(new ClamdError(`clamd is not reachable at ${describeAddress(address)} (${err.code ?? err.message})`));
    socket.once('error', onError);
  });
}

/** Everything clamd answers until it closes the connection (replies end with NUL in z-mode). */
function readReply(socket: net.Socket, address: ClamdAddress): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.once('error', (err) => reject(err instanceof ClamdError ? err : new ClamdError(`clamd at ${describeAddress(address)}: ${err.message}`)));
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8').replace(/\0+$/, '').trim()));
  });
}

/** A one-word command (PING, VERSION). */
export async function clamdCommand(address: ClamdAddress, command: 'PING' | 'VERSION', signal: AbortSignal): Promise<string> {
  const socket = await connect(address, signal);
  const reply = readReply(socket, address);
  socket.end(`z${command}\0`);
  return reply;
}

/** Streams the file to clamd and reads its verdict. */
export async function scanFile(address: ClamdAddress, file: string, signal: AbortSignal): Promise<ScanVerdict> {
  const socket = await connect(address, signal);
  const reply = readReply(socket, address);
  // clamd may answer (and close) before the whole stream is sent, e.g. past its StreamMaxLength.
  let closed = false;
  socket.once('close', () => (closed = true));
  const write = (buf: Buffer) => new Promise<void>((resolve) => (socket.write(buf) ? resolve() : socket.once('drain', resolve)));
  try {
    await write(Buffer.from('zINSTREAM\0'));
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 256 * 1024, signal })) {
      if (closed) break;
      const len = Buffer.alloc(4);
      len.writeUInt32BE((chunk as Buffer).length);
      await write(len);
      await write(chunk as Buffer);
    }
    if (!closed) socket.end(Buffer.alloc(4));
  } catch (err) {
    socket.destroy();
    throw err instanceof ClamdError ? err : new ClamdError(`scan stream to clamd failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  return verdict(await reply);
}

/** `stream: OK`, `stream: <Signature> FOUND`, or `<reason> ERROR`. */
export function verdict(reply: string): ScanVerdict {
  if (/^stream: OK$/.test(reply)) return { infected: false };
  const found = /^stream: (.+) FOUND$/.exec(reply);
  if (found) return { infected: true, signature: found[1]! };
  throw new ClamdError(`clamd answered: ${reply || '(nothing)'}`);
}
