/**
 * The one flow of an Upload API request that names a project by its public key: the requests that
 * create something (/base/, /from_url/, /multipart/start/, /group/, tus creation) and the reads that
 * the public key alone authorizes (/info/, /multipart/complete/, /group/info/):
 *
 *   find the project by its public key -> read the request's own fields (no I/O) -> check the
 *   upload credentials (spending a token's operations; reads have none) -> run the endpoint's
 *   work -> on a 4xx from that work, give the operations back (spec: failed requests consume nothing).
 *
 * Nothing that reaches the network or writes to the stores runs before the credentials are
 * checked: a stranger learns nothing (a DNS answer, an address class) from a refused request.
 * Limits and throttles that must act before authentication belong at the start of this flow.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { isAppError } from '../../core/errors.js';
import type { ProjectRow } from '../../projects/service.js';
import { authorizeUpload, type SignedEndpoint } from './credentials.js';
import { firstOf, publicKeyFields, type Params } from './params.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export interface UploadFlow<Fields, Result> {
  /** The endpoint whose upload credentials are checked; null for a read, which the public key alone authorizes. */
  endpoint: SignedEndpoint | null;
  /** Files the request creates: signed tokens are charged per file on /base/. */
  fileCount?: number;
  /** Reads and validates the endpoint's fields. Pure: it runs before the credentials check. */
  fields(project: ProjectRow): Fields;
  /** The endpoint's work, after the credentials check; a 4xx thrown here refunds the operations. */
  run(project: ProjectRow, fields: Fields): Promise<Result>;
}

export async function runUploadRequest<Fields, Result>(ctx: AppContext, req: FastifyRequest, key: RequestProject, flow: UploadFlow<Fields, Result>): Promise<Result> {
  const found = await key.require();
  const fields = flow.fields(found.project);
  const spend = flow.endpoint === null ? null : await authorizeUpload(ctx, req, found, key.params, flow.endpoint, flow.fileCount ?? 1);
  try {
    return await flow.run(found.project, fields);
  } catch (err) {
    if (spend && isAppError(err) && err.status < 500) await spend.refund();
    throw err;
  }
}

/**
 * How error texts name the public key: `UPLOADCARE_PUB_KEY` (or `SVC_PUB_KEY`) on base, multipart
 * and tus, `pub_key` elsewhere, as the SDK's tests expect.
 */
export type KeyLabel = 'base' | 'other';

export interface FoundProject {
  project: ProjectRow;
  secrets: string[];
}

/**
 * The project an upload request names by its public key, looked up once per request. The flow
 * asks for it; so may an endpoint that judges the key before it has read the whole body (/base/:
 * a key in the query string before the body, a key field as it arrives), and the flow then uses
 * what it found. The request is judged against the project as it stood when its key was read.
 */
export class RequestProject {
  /** The last key looked up and its answer: a key named again (query and body, header and body) is not looked up again. */
  private last: { pubKey: string; found: Promise<FoundProject | null> } | undefined;

  /** `params`: the request's parameters, which a streamed body may still add to. */
  constructor(
    private readonly ctx: AppContext,
    readonly params: Params,
    private readonly label: KeyLabel,
  ) {}

  /** Whether the parameters read so far name a public key. */
  get named(): boolean {
    return this.pubKey() !== undefined;
  }

  /** The project a public key names, or null (a claim, e.g. the SDK's client header, checked without a 403). */
  lookup(pubKey: string): Promise<FoundProject | null> {
    if (this.last?.pubKey !== pubKey) this.last = { pubKey, found: this.ctx.projects.lookup(pubKey) };
    return this.last.found;
  }

  /** The project the request's public key names, or the wire's 403 (no key, or an unknown one). */
  async require(): Promise<FoundProject> {
    const name = this.label === 'base' ? (this.ctx.config.sdkAliases ? 'UPLOADCARE_PUB_KEY' : 'SVC_PUB_KEY') : 'pub_key';
    const pub = this.pubKey();
    if (!pub) throw uploadErrors.publicKeyRequired(name);
    const found = await this.lookup(pub);
    if (!found) throw uploadErrors.publicKeyInvalid(name);
    return found;
  }

  private pubKey(): string | undefined {
    return firstOf(this.params, publicKeyFields(this.ctx.config.sdkAliases));
  }
}
