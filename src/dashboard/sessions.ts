/**
 * Dashboard sessions: sign-in with a project's public and secret key (or the operator's admin token
 * and a public key), a random token in an HttpOnly cookie, its SHA-256 in the metadata store.
 * A session ends at its expiry, at sign-out, or when the secret key it was opened with is revoked.
 */
import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import { nowUs } from '../core/time.js';
import type { SessionRepo, SessionRow } from './repo.js';
import { adminErrors } from '../core/error-catalogue/admin.js';

export interface SignInInput {
  publicKey: string;
  secretKey?: string;
  adminToken?: string;
}

export interface SignedIn {
  token: string;
  maxAgeS: number;
  projectName: string;
}

const sha256 = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');

/** Equal strings, compared in constant time (hashing first makes the lengths equal). */
function sameSecret(a: string, b: string): boolean {
  return crypto.timingSafeEqual(Buffer.from(sha256(a), 'hex'), Buffer.from(sha256(b), 'hex'));
}

const BAD_CREDENTIALS = adminErrors.badCredentials;

export class SessionService {
  constructor(private readonly ctx: AppContext, private readonly repo: SessionRepo) {}

  async signIn(input: SignInInput): Promise<SignedIn> {
    const { project, secretHash } = input.adminToken !== undefined ? await this.checkAdmin(input.publicKey, input.adminToken) : await this.checkKey(input.publicKey, input.secretKey ?? '');
    const token = crypto.randomBytes(32).toString('base64url');
    const now = nowUs();
    const ttlMs = this.ctx.config.dashboardSessionTtlMs;
    // Sign-ins are rare: tidying ended sessions here keeps the table small without a job.
    await this.repo.removeExpired(now);
    await this.repo.insert({ tokenHash: sha256(token), projectId: project.id, pubKey: project.pubKey, secretHash, createdUs: now, expiresUs: now + ttlMs * 1000 });
    return { token, maxAgeS: Math.floor(ttlMs / 1000), projectName: project.name };
  }

  /** The live session a cookie's token names, or null. */
  async resolve(token: string): Promise<SessionRow | null> {
    const row = await this.repo.find(sha256(token));
    if (!row) return null;
    if (row.expiresUs <= nowUs() || !(await this.keyStillActive(row))) {
      await this.repo.remove(row.tokenHash);
      return null;
    }
    return row;
  }

  async signOut(token: string): Promise<void> {
    await this.repo.remove(sha256(token));
  }

  private async checkKey(publicKey: string, secretKey: string) {
    return this.ctx.projects.withKeys(publicKey, async (found) => {
      if (!found || !found.secrets.some((s) => sameSecret(s, secretKey))) throw BAD_CREDENTIALS();
      return { project: found.project, secretHash: sha256(secretKey) };
    });
  }

  private async checkAdmin(publicKey: string, adminToken: string) {
    const configured = this.ctx.config.dashboardAdminToken;
    if (!configured || !sameSecret(configured, adminToken)) throw BAD_CREDENTIALS();
    const found = await this.ctx.projects.lookup(publicKey);
    if (!found) throw BAD_CREDENTIALS();
    return { project: found.project, secretHash: null };
  }

  /** A key sign-in lasts only while its secret key is active (revocations reach nodes within the key cache's 2 s). */
  private async keyStillActive(row: SessionRow): Promise<boolean> {
    const found = await this.ctx.projects.lookup(row.pubKey);
    if (!found || found.project.id !== row.projectId) return false;
    if (row.secretHash === null) return this.ctx.config.dashboardAdminToken !== undefined;
    return found.secrets.some((s) => sha256(s) === row.secretHash);
  }
}
