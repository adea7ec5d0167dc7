/** Projects and their keys: the tenancy unit of every API. */
import { randomHex } from '../core/ids.js';
import { nowUs } from '../core/time.js';
import type { ProjectPatch, ProjectRepo, ProjectRow, SecretKeyRow } from './repo.js';
import { AppError } from '../core/errors.js';
import { aclFor, mintCdnToken } from '../auth/cdn-token.js';
import { adminErrors } from '../core/error-catalogue/admin.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export type { ProjectPatch, ProjectRow, SecretKeyRow };

/** What the CDN needs of a project: whether URLs need a token, and the key tokens are signed with. */
export interface CdnPolicy {
  signed: boolean;
  key: Buffer | null;
}

export interface MintedCdnToken {
  token: string;
  /** The acl granted (null for an exact-URL token). */
  acl: string | null;
  expire: number;
  /** The CDN URL with the token (the path's own URL for an exact-URL token). */
  url: string;
}

/** The longest a minted CDN token may live: one year. */
export const CDN_TOKEN_MAX_TTL_S = 365 * 24 * 3600;

export interface CreatedProject {
  project: ProjectRow;
  secretKey: string;
}

export class ProjectService {
  /** Pub key -> project, kept briefly: every upload and REST call looks one up. */
  private readonly cache = new Map<string, { project: ProjectRow; secrets: string[]; at: number }>();
  /** Project id -> CDN policy, kept as briefly: the CDN asks on every request of a file it serves. */
  private readonly cdnCache = new Map<number, { policy: CdnPolicy; at: number }>();

  constructor(private readonly repo: ProjectRepo, private readonly cacheMs = 2000) {}

  async create(opts: { name: string; autostore?: boolean; signedUploads?: boolean; pubKey?: string; secretKey?: string }): Promise<CreatedProject> {
    const name = opts.name.trim();
    if (!name) throw adminErrors.projectNameEmpty();
    const pubKey = opts.pubKey ?? randomHex(10);
    const secretKey = opts.secretKey ?? randomHex(20);
    if (!/^[A-Za-z0-9_-]{4,64}$/.test(pubKey)) throw adminErrors.publicKeyInvalid();
    if (!/^[A-Za-z0-9_-]{16,128}$/.test(secretKey)) throw adminErrors.secretKeyInvalid();
    const project = await this.repo.insert(
      { name, pubKey, autostore: opts.autostore ?? true, signedUploads: opts.signedUploads ?? false, createdUs: nowUs() },
      secretKey,
    );
    return { project, secretKey };
  }

  list(): Promise<ProjectRow[]> {
    return this.repo.list();
  }

  /** The project and its active secret keys, or null for an unknown public key. */
  async lookup(pubKey: string): Promise<{ project: ProjectRow; secrets: string[] } | null> {
    const hit = this.cached(pubKey);
    if (hit) return hit;
    const project = await this.repo.byPubKey(pubKey);
    if (!project) return null;
    const secrets = (await this.repo.secrets(project.id)).map((s) => s.secret);
    const entry = { project, secrets, at: Date.now() };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(pubKey, entry);
    return entry;
  }

  /** What `lookup` would answer from the cache alone, without a promise; undefined when it would read the store. */
  cached(pubKey: string): { project: ProjectRow; secrets: string[] } | undefined {
    const hit = this.cache.get(pubKey);
    return hit && Date.now() - hit.at < this.cacheMs ? hit : undefined;
  }

  /**
   * Runs a credential check against the cached keys and, if it fails, once more against keys read
   * afresh: a key added a moment ago (possibly on another node) must work at once. Revocations
   * still take up to `cacheMs` to reach every node.
   */
  async withKeys<T>(pubKey: string, check: (found: { project: ProjectRow; secrets: string[] } | null) => Promise<T>): Promise<T> {
    const cached = await this.lookup(pubKey);
    try {
      return await check(cached);
    } catch (err) {
      if (!(err instanceof AppError) || (err.status !== 401 && err.status !== 403)) throw err;
      this.cache.delete(pubKey);
      const fresh = await this.lookup(pubKey);
      if (JSON.stringify(fresh?.secrets) === JSON.stringify(cached?.secrets)) throw err;
      return check(fresh);
    }
  }

  /** By internal id (jobs and REST routes carry the id), uncached; null when unknown. */
  byId(id: number): Promise<ProjectRow | null> {
    return this.repo.byId(id);
  }

  async require(pubKey: string): Promise<ProjectRow> {
    const found = await this.repo.byPubKey(pubKey);
    if (!found) throw adminErrors.projectNotFound(pubKey);
    return found;
  }

  async addSecret(pubKey: string): Promise<SecretKeyRow> {
    const project = await this.require(pubKey);
    this.cache.delete(pubKey);
    return this.repo.addSecret(project.id, randomHex(20), nowUs());
  }

  async listSecrets(pubKey: string): Promise<SecretKeyRow[]> {
    return this.repo.secrets((await this.require(pubKey)).id, true);
  }

  async revokeSecret(pubKey: string, keyId: number): Promise<void> {
    const project = await this.require(pubKey);
    const active = await this.repo.secrets(project.id);
    if (!active.some((k) => k.id === keyId)) throw adminErrors.keyNotFound(keyId, pubKey);
    // A project must keep one way in: refuse to revoke its last key.
    if (active.length === 1) throw adminErrors.lastKey();
    await this.repo.revokeSecret(project.id, keyId, nowUs());
    this.cache.delete(pubKey);
  }

  async update(pubKey: string, patch: Omit<ProjectPatch, 'cdnSecret'>): Promise<ProjectRow> {
    const project = await this.require(pubKey);
    // Requiring tokens needs a key to sign them with.
    if (patch.signedCdn === true) await this.repo.ensureCdnSecret(project.id, randomHex(32));
    await this.repo.update(project.id, patch);
    this.cache.delete(pubKey);
    this.cdnCache.delete(project.id);
    return this.require(pubKey);
  }

  /** The project's CDN key (hex), made on first use; `rotate` replaces it (old tokens stop working). */
  async cdnKey(pubKey: string, rotate = false): Promise<string> {
    const project = await this.require(pubKey);
    this.cdnCache.delete(project.id);
    if (rotate) {
      const key = randomHex(32);
      await this.repo.update(project.id, { cdnSecret: key });
      return key;
    }
    return project.cdnSecret ?? this.repo.ensureCdnSecret(project.id, randomHex(32));
  }

  /**
   * Mints a token for a CDN path (`<uuid>/…`, `/<uuid>/…/` or a full CDN URL): a path grant
   * (`wildcard`: every path under it), or, with `exactUrl`, a token for that one URL.
   */
  async mintCdnToken(projectId: number, cdnBase: string, opts: { path: string; ttlS: number; wildcard?: boolean; exactUrl?: boolean; now?: number }): Promise<MintedCdnToken> {
    const project = await this.byId(projectId);
    if (!project) throw restErrors.notFound();
    const key = project.cdnSecret ?? (await this.repo.ensureCdnSecret(project.id, randomHex(32)));
    const expire = Math.floor((opts.now ?? Date.now()) / 1000) + opts.ttlS;
    const path = cdnPathOf(opts.path, cdnBase);
    if (opts.exactUrl) {
      const url = `${cdnBase}${path}`;
      const token = mintCdnToken(key, { url }, expire);
      return { token, acl: null, expire, url: `${url}?token=${token}` };
    }
    const acl = aclFor(path, opts.wildcard ?? false);
    const token = mintCdnToken(key, { acl }, expire);
    const base = acl.endsWith('*') ? acl.slice(0, -1) : acl;
    return { token, acl, expire, url: `${cdnBase}${path.endsWith('/') || acl.endsWith('*') ? base : path}?token=${token}` };
  }

  /** Whether a project's CDN URLs need a token, cached for `cacheMs` like the key lookups. */
  async cdnPolicy(projectId: number): Promise<CdnPolicy> {
    const hit = this.cachedCdnPolicy(projectId);
    if (hit) return hit;
    const project = await this.repo.byId(projectId);
    const policy: CdnPolicy = {
      signed: project?.signedCdn ?? false,
      key: project?.cdnSecret ? Buffer.from(project.cdnSecret, 'hex') : null,
    };
    if (this.cdnCache.size > 10_000) this.cdnCache.clear();
    this.cdnCache.set(projectId, { policy, at: Date.now() });
    return policy;
  }

  /** The cached policy while fresh, else null: a warm CDN request asks without a promise. */
  cachedCdnPolicy(projectId: number): CdnPolicy | null {
    const hit = this.cdnCache.get(projectId);
    return hit && Date.now() - hit.at < this.cacheMs ? hit.policy : null;
  }
}

/** `/uuid/…` from a path with or without its leading slash, or from a full URL on the CDN base. */
function cdnPathOf(input: string, cdnBase: string): string {
  let p = input.trim();
  if (p.startsWith(cdnBase)) p = p.slice(cdnBase.length);
  else if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
  p = p.split('?')[0] ?? '';
  if (!/^\/?[0-9a-fA-F-]{36}(~\d+)?(\/|$)/.test(p)) throw adminErrors.purgePathInvalid();
  return p.startsWith('/') ? p : `/${p}`;
}
