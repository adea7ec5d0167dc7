/**
 * The suite fixture: `const srv = useServer()` at the top of a test file starts one real server (and a
 * project on it) before the suite's tests and stops it after them. The handle's fields are read
 * inside hooks and tests, once the server runs; reading them earlier throws.
 *
 * Suites whose server is special (several nodes on one store, restarts on the same data dir,
 * SIGKILL, a server started per test) call startServer() themselves and say why in a comment.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { START_TIMEOUT_MS, startServer, type ProjectKeys, type StartOptions, type TestServer } from './server.js';
import { restClient, uploadBase, type RestCall } from './rest.js';

export interface UseServerOptions extends StartOptions {
  /** Extra arguments of `stowage project create` for the suite's project. */
  project?: string[];
  /** Delete the data dir once the server stopped (suites that write gigabytes). */
  removeDataDir?: boolean;
}

export interface UploadOptions {
  /** UPLOADCARE_STORE: stored (default) or not. */
  store?: boolean;
  /** The part's content type (default application/octet-stream). */
  type?: string;
  /** More form fields (metadata[...], signature, ...). */
  fields?: Record<string, string>;
}

export interface ServedSuite {
  /** The running server (URLs, data dir, CLI, output, stop). */
  readonly server: TestServer;
  /** Base URLs of the three surfaces, without a trailing slash. */
  readonly rest: string;
  readonly upload: string;
  readonly cdn: string;
  /** The S3-compatible surface (a suite started with STOWAGE_ONLY=…,s3); throws when not served. */
  readonly s3: string;
  /** The project created for the suite. */
  readonly keys: ProjectKeys;
  /** REST calls signed with the suite project's keys. */
  readonly call: RestCall;
  /** Uploads one file through /base/ into the suite's project; expects 200 and answers its uuid. */
  uploadFile(name: string, data: Buffer | string, opts?: UploadOptions): Promise<string>;
  /** Another project on the same server, with its signed REST client. */
  newProject(extra?: string[]): Promise<{ keys: ProjectKeys; call: RestCall }>;
}

/**
 * Registers beforeAll (start the server, create a project) and afterAll (stop it). `options` may be
 * a function, called in beforeAll, for settings known only then (a receiver's URL started by an
 * earlier beforeAll of the same suite). `hookTimeout` bounds each of the two hooks: by default the
 * start's own limit plus time for the project's admin command.
 */
export function useServer(
  options: UseServerOptions | (() => UseServerOptions | Promise<UseServerOptions>) = {},
  hookTimeout = START_TIMEOUT_MS + 90_000,
): ServedSuite {
  let state: { server: TestServer; keys: ProjectKeys; call: RestCall; removeDataDir: boolean } | undefined;
  const running = () => {
    if (!state) throw new Error('useServer(): the server is not running yet (read its fields inside hooks and tests)');
    return state;
  };

  beforeAll(async () => {
    const { project = [], removeDataDir = false, ...start } = typeof options === 'function' ? await options() : options;
    const server = await startServer(start);
    try {
      const keys = await server.createProject(project);
      state = { server, keys, call: restClient(server.rest, keys), removeDataDir };
    } catch (err) {
      await server.stop(); // a half-set-up suite must not leave its server running
      throw err;
    }
  }, hookTimeout);
  afterAll(async () => {
    if (!state) return;
    await state.server.stop();
    if (state.removeDataDir) fs.rmSync(state.server.dataDir, { recursive: true, force: true });
    state = undefined;
  }, hookTimeout);

  return {
    get server() {
      return running().server;
    },
    get rest() {
      return running().server.rest;
    },
    get upload() {
      return running().server.upload;
    },
    get cdn() {
      return running().server.cdn;
    },
    get s3() {
      const url = running().server.s3;
      if (!url) throw new Error('useServer(): this suite\'s server does not serve the S3 API (STOWAGE_ONLY=…,s3)');
      return url;
    },
    get keys() {
      return running().keys;
    },
    get call() {
      return running().call;
    },
    async uploadFile(name, data, opts = {}) {
      const { server, keys } = running();
      const fields = { UPLOADCARE_STORE: opts.store === false ? '0' : '1', ...opts.fields };
      const r = await uploadBase(server.upload, keys.public_key, [{ name, data, ...(opts.type ? { type: opts.type } : {}) }], fields);
      expect(r.status, r.text).toBe(200);
      return r.json.file as string;
    },
    async newProject(extra = []) {
      const { server } = running();
      const keys = await server.createProject(extra);
      return { keys, call: restClient(server.rest, keys) };
    },
  };
}
