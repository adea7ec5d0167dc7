/**
 * Signed uploads: when the project requires them, verify the token or signature for the endpoint
 * and spend the token's operations atomically. The returned Spend lets the handler give the
 * operations back when the request ends in a 4xx (spec: failed requests consume nothing).
 */
import type { FastifyRequest } from 'fastify';
import { operationsCost, verifyUploadCredentials } from '../../auth/upload-credentials.js';
import type { ProjectRow } from '../../projects/service.js';
import type { AppContext } from '../../context.js';
import { TokenUsageRepo } from '../../db/token-usage.js';
import { firstOf, type Params } from './params.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export interface Spend {
  refund(): Promise<void>;
}

const NOTHING: Spend = { refund: async () => undefined };

export type SignedEndpoint = '/base/' | '/multipart/start/' | '/from_url/' | '/group/' | '/tus/';

export async function authorizeUpload(
  ctx: AppContext,
  req: FastifyRequest,
  found: { project: ProjectRow; secrets: string[] },
  params: Params,
  endpoint: SignedEndpoint,
  fileCount = 1,
): Promise<Spend> {
  if (!found.project.signedUploads) return NOTHING;
  const signature = firstOf(params, ['signature']);
  const expire = firstOf(params, ['expire']);
  const verify = (secrets: string[]) =>
    verifyUploadCredentials({
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
      ...(signature !== undefined ? { signature } : {}),
      ...(expire !== undefined ? { expire } : {}),
      secrets,
      endpointPath: endpoint,
    });
  // A key added a moment ago must work at once: on failure, retry with keys read afresh.
  const grant = await ctx.projects.withKeys(found.project.pubKey, async (current) => verify(current?.secrets ?? found.secrets));
  const cost = operationsCost(endpoint, fileCount);
  if (grant.kind !== 'token' || grant.operationsLimit === null || cost === 0) return NOTHING;
  const exp = typeof grant.claims?.['exp'] === 'number' ? grant.claims['exp'] : Math.floor(Date.now() / 1000) + 86400;
  const usage = new TokenUsageRepo(ctx.db);
  if (!(await usage.spend(grant.tokenId, cost, grant.operationsLimit, exp * 1_000_000))) {
    throw uploadErrors.tokenOperationsSpent();
  }
  return { refund: () => usage.refund(grant.tokenId, cost) };
}
