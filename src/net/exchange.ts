/**
 * One short exchange of the outbound client (OutboundClient.exchange): the status and the first
 * bytes of the answer as text, read straight off undici's dispatcher.
 *
 * A webhook delivery needs no more than that, and undici's request() (an AsyncResource, a Readable
 * body, an abort signal's listeners) with a stream consumer around it took about a third more CPU
 * per POST to a local receiver than this handler (kernel time included). The handler keeps the
 * chunks it needs, drops the rest up to the body cap (so that a usual answer ends and its
 * connection is reused), and past the cap or the deadline gives up the connection.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import type { AppError } from '../core/errors.js';
import { mapError } from './response.js';

export interface Exchange {
  status: number;
  /** The answer's start as UTF-8 text, at most excerptBytes of it; null when the body failed. */
  excerpt: string | null;
  /** Why the body could not be read (past the deadline, a broken connection); the status stands. */
  bodyError: AppError | null;
}

export interface ExchangeInit {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Bytes of the answer kept as its excerpt (at most maxBytes). */
  excerptBytes: number;
  /** The client's maxBytes unless given. */
  maxBytes?: number;
  /** The client's timeoutMs unless given. */
  timeoutMs?: number;
}

export interface ExchangeLimits {
  /** Bytes of the answer kept for the excerpt. */
  excerptBytes: number;
  /** Bytes read in all; past them the rest is not waited for and the connection is dropped. */
  maxBytes: number;
  /** Total deadline: connect, headers and body. */
  timeoutMs: number;
}

type Settle = { resolve: (e: Exchange) => void; reject: (e: AppError) => void };

/** Passed to undici when we let go of a request; it comes back to onResponseError, ignored by then. */
const LET_GO = new Error('outbound exchange let go');

/**
 * The answer is given (`answered`) as soon as the excerpt is full or the body ends; the rest of a
 * longer body is still read and dropped until its end (`over`), so that its connection can be
 * reused, unless it runs past the body cap or the deadline: then the connection is dropped.
 */
export class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private answered = false;
  private over = false;
  private timedOut = false;
  private status = 0;
  /** The kept chunks: most answers are one small chunk, so the first goes without an array. */
  private first: Buffer | null = null;
  private rest: Buffer[] | null = null;
  private kept = 0;
  private read = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: ExchangeLimits,
    private readonly settle: Settle,
  ) {
    this.timer = setTimeout(() => this.expire(), limits.timeoutMs);
    this.timer.unref();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Over while queued for a connection: the deadline passed.
    if (this.over) controller.abort(LET_GO);
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode >= 200) this.status = statusCode; // 1xx are interim answers
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    this.read += chunk.length;
    if (!this.answered) {
      this.keep(chunk);
      if (this.kept >= this.limits.excerptBytes) this.answer();
    }
    if (this.read > this.limits.maxBytes) this.letGo();
  }

  onResponseEnd(): void {
    if (this.over) return;
    this.end();
    if (!this.answered) this.answer();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.over) return;
    this.end();
    if (this.answered) return;
    this.answered = true;
    const error = mapError(err, this.timedOut);
    if (this.status) this.settle.resolve({ status: this.status, excerpt: null, bodyError: error });
    else this.settle.reject(error);
  }

  private keep(chunk: Buffer): void {
    if (this.first === null) this.first = chunk;
    else (this.rest ??= [this.first]).push(chunk);
    this.kept += chunk.length;
  }

  private answer(): void {
    this.answered = true;
    const body = this.rest ? Buffer.concat(this.rest) : this.first;
    this.first = this.rest = null;
    this.settle.resolve({ status: this.status, excerpt: body ? excerptOf(body, this.limits.excerptBytes) : '', bodyError: null });
  }

  private expire(): void {
    if (this.over) return;
    this.timedOut = true;
    this.onResponseError(undefined, LET_GO);
    this.controller?.abort(LET_GO);
  }

  /** Stops reading: the answer so far is given and the connection dropped. */
  private letGo(): void {
    this.end();
    if (!this.answered) this.answer();
    this.controller?.abort(LET_GO);
  }

  private end(): void {
    this.over = true;
    clearTimeout(this.timer);
  }
}

/**
 * At most `maxBytes` of the body as UTF-8 text, cut on a character boundary: a character the cut
 * would split is left out (the decoder holds back an incomplete sequence), and text that grew
 * when decoded (each invalid byte becomes a 3-byte U+FFFD) is cut again.
 */
export function excerptOf(body: Buffer, maxBytes: number): string {
  const text = body.length <= maxBytes ? body.toString('utf8') : new StringDecoder('utf8').write(body.subarray(0, maxBytes));
  return clipUtf8(text, maxBytes);
}

/** At most `maxBytes` of UTF-8, cut on a code point boundary. */
export function clipUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back to the first byte of a code point
  return bytes.subarray(0, end).toString('utf8');
}
