/**
 * The one flow of an Upload API request that creates something (/base/, /from_url/,
 * /multipart/start/, /group/):
 *
 *   find the project by its public key -> read the request's own fields (no I/O) -> check the
 *   upload credentials (spending a token's operations) -> run the endpoint's work -> on a 4xx from
 *   that work, give the operations back (spec: failed requests consume nothing).
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
import { requireProject, type KeyLabel, type Params } from './params.js';

export interface UploadFlow<Fields, Result> {
  endpoint: SignedEndpoint;
  /** How error texts name the public key field (see requireProject). */
  keyLabel: KeyLabel;
  /** Files the request creates: signed tokens are charged per file on /base/. */
  fileCount?: number;
  /** Reads and validates the endpoint's fields. Pure: it runs before the credentials check. */
  fields(project: ProjectRow): Fields;
  /** The endpoint's work, after the credentials check; a 4xx thrown here refunds the operations. */
  run(project: ProjectRow, fields: Fields): Promise<Result>;
}

export async function runUploadRequest<Fields, Result>(
  ctx: AppContext,
  req: FastifyRequest,
  params: Params,
  flow: UploadFlow<Fields, Result>,
): Promise<Result> {
  const found = await requireProject(ctx, params, flow.keyLabel);
  const fields = flow.fields(found.project);
  const spend = await authorizeUpload(ctx, req, found, params, flow.endpoint, flow.fileCount ?? 1);
  try {
    return await flow.run(found.project, fields);
  } catch (err) {
    if (isAppError(err) && err.status < 500) await spend.refund();
    throw err;
  }
}
