/**
 * The one outbound HTTP client (from_url fetches, webhook deliveries, remote copies).
 *
 * SSRF guard, in two places so that no path skips it:
 *  - hostnames are resolved by our own lookup, installed as the socket's `lookup` on the undici
 *    Agent: every address is checked and the socket connects to exactly the checked addresses,
 *    so there is no window between "check" and "connect" for DNS rebinding;
 *  - IP-literal hosts never reach a lookup (Node connects to them directly), so each hop's
 *    literal is checked before the request is dispatched.
 * Redirects are followed here, hop by hop, so each Location goes through the same checks.
 * Bodies are exposed as size-capped streams and every request has a total deadline.
 * exchange() is the short form for answers that matter only by their status and first bytes
 * (webhook deliveries): one hop, no stream, the same guard and deadline.
 */
import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { AppError } from '../core/errors.js';
import { AddressPolicy, parseAddress, parseAllowList } from './address-policy.js';
import { downloadErrors, urlErrors } from '../core/error-catalogue/download.js';
import { type Exchange, ExchangeHandler, type ExchangeInit } from './exchange.js';
import { headerValue, mapError, wrapResponse, type OutboundResponse } from './response.js';
import { parseOutboundUrl, unbracket } from './url-syntax.js';

export type { OutboundResponse } from './response.js';
export type { Exchange, ExchangeInit } from './exchange.js';
export { parseAllowList } from './address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}
/** Resolves a hostname to all its addresses; injectable so tests can fake DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface OutboundOptions {
  /** CIDRs reachable despite the guard (STOWAGE_OUTBOUND_ALLOW). */
  allowCidrs: string[];
  /** Total deadline of one request(): connect, redirects, headers and the whole body. */
  timeoutMs: number;
  /** Default body cap; a request may lower or raise it. */
  maxBytes: number;
  maxRedirects: number;
  userAgent?: string;
  /** TCP+TLS connect deadline; defaults to min(10 s, timeoutMs). */
  connectTimeoutMs?: number;
  /** Max silence while waiting for headers or between body chunks; defaults to timeoutMs. */
  idleTimeoutMs?: number;
  resolver?: Resolver;
}

export interface RequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  maxBytes?: number;
  timeoutMs?: number;
  /** false returns a 3xx to the caller instead of following it. Default true. */
  followRedirects?: boolean;
}

/** A URL that passed the literal check, with what a dispatch needs of it. */
interface Target {
  url: URL;
  origin: string;
  path: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** URLs kept parsed and checked per client (firstHop); past this many the set starts over. */
const CHECKED_URLS = 256;
const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_AGAIN', 'EAI_FAIL']);

const defaultResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`OutboundClient: ${name} must be a positive number`);
  return v;
}

export class OutboundClient {
  private readonly policy: AddressPolicy;
  private readonly resolver: Resolver;
  private readonly agent: Agent;
  private readonly checkedUrls = new Map<string, Target>();

  constructor(private readonly opts: OutboundOptions) {
    positive('timeoutMs', opts.timeoutMs);
    positive('maxBytes', opts.maxBytes);
    if (!Number.isInteger(opts.maxRedirects) || opts.maxRedirects < 0) {
      throw new Error('OutboundClient: maxRedirects must be a non-negative integer');
    }
    this.policy = new AddressPolicy(parseAllowList(opts.allowCidrs));
    this.resolver = opts.resolver ?? defaultResolver;
    const idle = opts.idleTimeoutMs ?? opts.timeoutMs;
    this.agent = new Agent({
      connect: { timeout: opts.connectTimeoutMs ?? Math.min(10_000, opts.timeoutMs), lookup: this.guardedLookup },
      headersTimeout: idle,
      bodyTimeout: idle,
    });
  }

  /** Syntax, DNS and address checks of a URL without fetching it (for synchronous 400s). */
  async checkUrl(url: string): Promise<void> {
    const u = parseOutboundUrl(url);
    const host = unbracket(u.hostname);
    if (!this.checkLiteral(host)) await this.resolveChecked(host);
  }

  /**
   * Sends a request and returns any final status (webhooks need non-2xx too). Throws URL* errors
   * for refused hops and Download* errors for timeouts and network failures.
   */
  async request(url: string, init: RequestInit = {}): Promise<OutboundResponse> {
    const maxBytes = init.maxBytes ?? this.opts.maxBytes;
    const deadline = new Deadline();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.fire();
    }, init.timeoutMs ?? this.opts.timeoutMs);
    timer.unref();
    const fail = (err: unknown): never => {
      clearTimeout(timer);
      throw mapError(err, timedOut);
    };

    let current = this.firstHop(url, fail).url;
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    let headers: Record<string, string> = { 'user-agent': this.opts.userAgent ?? 'Stowage', ...lowerKeys(init.headers) };

    for (let hop = 0; ; hop++) {
      if (hop > 0) this.checkHop(current, fail);
      let res: Dispatcher.ResponseData;
      try {
        res = await this.agent.request({
          origin: current.origin, // drops userinfo and fragment
          path: current.pathname + current.search,
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          signal: deadline,
        });
      } catch (err) {
        return fail(err);
      }
      const location = headerValue(res.headers.location);
      if (!REDIRECTS.has(res.statusCode) || !location || init.followRedirects === false) {
        return wrapResponse(res, current.href, maxBytes, () => timedOut, () => clearTimeout(timer));
      }
      await res.body.dump().catch(() => undefined);
      if (hop >= this.opts.maxRedirects) fail(urlErrors.redirectsLimit());
      const next = safeParse(URL.canParse(location, current) ? new URL(location, current).href : location, fail);
      // Browser semantics: 303 (and 301/302 after POST) continue as a body-less GET.
      if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        const { 'content-type': _t, 'content-length': _l, ...rest } = headers;
        headers = rest;
      }
      // Credentials meant for one origin must not leak to another.
      if (next.origin !== current.origin) {
        const { authorization: _a, cookie: _c, ...rest } = headers;
        headers = rest;
      }
      current = next;
    }
  }

  /**
   * Sends a request and answers its status and the first excerptBytes of the body as text: a 3xx
   * is the answer (no redirect is followed). Throws as request() does when no status arrives; a
   * body that fails after the status is reported in bodyError.
   */
  exchange(url: string, init: ExchangeInit): Promise<Exchange> {
    let target: Target;
    try {
      target = this.firstHop(url, (err) => {
        throw err;
      });
    } catch (err) {
      return Promise.reject(err);
    }
    const maxBytes = init.maxBytes ?? this.opts.maxBytes;
    const limits = { excerptBytes: Math.min(init.excerptBytes, maxBytes), maxBytes, timeoutMs: init.timeoutMs ?? this.opts.timeoutMs };
    const headers = init.headers['user-agent'] === undefined ? { 'user-agent': this.opts.userAgent ?? 'Stowage', ...init.headers } : init.headers;
    // undici's idle timers (set and cleared on each request) cannot fire before a deadline that
    // started earlier and is no longer: 0 turns them off.
    const idle = (this.opts.idleTimeoutMs ?? this.opts.timeoutMs) >= limits.timeoutMs ? 0 : undefined;
    return new Promise((resolve, reject) => {
      const opts = { origin: target.origin, path: target.path, method: init.method as Dispatcher.HttpMethod, headers, body: init.body, headersTimeout: idle, bodyTimeout: idle };
      this.agent.dispatch(opts, new ExchangeHandler(limits, { resolve, reject }));
    });
  }

  /** request() for fetching a file: non-2xx becomes DownloadFileHTTP*Error, declared size is checked first. */
  async download(url: string, init: RequestInit = {}): Promise<OutboundResponse> {
    const res = await this.request(url, { ...init, method: init.method ?? 'GET' });
    const maxBytes = init.maxBytes ?? this.opts.maxBytes;
    let err: AppError | null = null;
    if (res.status >= 400 && res.status < 500) err = downloadErrors.clientError(res.status);
    else if (res.status < 200 || res.status >= 300) err = downloadErrors.serverError(res.status);
    else if (res.contentLength !== null && res.contentLength > maxBytes) err = downloadErrors.tooBig(res.contentLength, maxBytes);
    if (err) {
      await res.discard();
      throw err;
    }
    return res;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * The request's URL parsed and its literal host checked (checkHop), from the last URLs asked
   * for when it is one of them: a webhook target is asked for over and over, and parsing and
   * checking it were a few per cent of a delivery's CPU. The policy never changes for a client,
   * so a URL that passed once passes again; a refused one is not kept. The URLs kept are
   * shared: nothing here changes a URL object.
   */
  private firstHop(url: string, fail: (e: unknown) => never): Target {
    const known = this.checkedUrls.get(url);
    if (known) return known;
    const parsed = safeParse(url, fail);
    this.checkHop(parsed, fail);
    if (this.checkedUrls.size >= CHECKED_URLS) this.checkedUrls.clear();
    // origin drops userinfo and fragment
    const target = { url: parsed, origin: parsed.origin, path: parsed.pathname + parsed.search };
    this.checkedUrls.set(url, target);
    return target;
  }

  /** A hop's literal host against the policy (a hostname is checked at its lookup). */
  private checkHop(url: URL, fail: (e: unknown) => never): void {
    try {
      this.checkLiteral(unbracket(url.hostname));
    } catch (err) {
      fail(err);
    }
  }

  /** For an IP literal: whether it may be contacted. For a hostname: null (DNS decides). */
  private checkLiteral(host: string): boolean | null {
    const literal = parseAddress(host);
    if (!literal) return null;
    if (!this.policy.allows(literal)) throw urlErrors.privateIp();
    return true;
  }

  /** Resolves and checks every address: one refused address refuses the host (no partial trust). */
  private async resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    let addrs: ResolvedAddress[];
    try {
      addrs = await this.resolver(hostname);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      throw NOT_FOUND_CODES.has(code) ? urlErrors.hostNotFound() : downloadErrors.network(code || 'DNS failure');
    }
    if (addrs.length === 0) throw urlErrors.hostNotFound();
    if (!addrs.every((a) => this.policy.allows(a.address))) throw urlErrors.privateIp();
    return addrs;
  }

  /** net.connect's `lookup` hook: the socket connects only to addresses that passed the policy. */
  private readonly guardedLookup: LookupFunction = (hostname, options, callback) => {
    this.resolveChecked(hostname).then(
      (all) => {
        const addrs = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const first = addrs[0];
        if (!first) return callback(urlErrors.hostNotFound() as unknown as NodeJS.ErrnoException, '', 0);
        if (options.all) callback(null, addrs);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * The request's deadline as undici's `signal`, which may be an EventEmitter: an AbortController
 * (with its AbortSignal, an EventTarget) per request was 1-5 % of the main thread's busy time in a
 * webhook burst (createAbortSignal and the signal's getter). undici reads `aborted` (and `reason`:
 * none here, so it fails the request with its RequestAbortedError, which mapError turns into the
 * timeout error, as it did the AbortError).
 */
class Deadline extends EventEmitter {
  aborted = false;

  fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

function safeParse(url: string, fail: (e: unknown) => never): URL {
  try {
    return parseOutboundUrl(url);
  } catch (err) {
    return fail(err);
  }
}

function lowerKeys(h: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
