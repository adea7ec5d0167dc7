/**
 * Signed uploads: when the project requires them, verify the token or signature for the endpoint
 * and spend the token's operations atomically. The returned Spend lets the handler give the
 * operations back when the request ends in a 4xx (spec: failed requests consume nothing).
 */
import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { operationsCost, verifyUploadCredentials } from '../../auth/upload-credentials.js';
import { AppError } from '../../core/errors.js';
import type { ProjectRow } from '../../core/projects.js';
import type { AppContext } from '../../context.js';
import { firstOf, type Params } from './params.js';

export interface Spend {
  refund(): Promise<void>;
}

const NOTHING: Spend = { refund: async () => undefined };

export type SignedEndpoint = '/base/' | '/multipart/start/' | '/from_url/' | '/group/';

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
  await spend(ctx, grant.tokenId, cost, grant.operationsLimit, exp * 1_000_000);
  return {
    refund: async () => {
      await ctx.db.kysely
        .updateTable('token_usage')
        .set({ used: sql<number>`used - ${cost}` })
        .where('token_id', '=', grant.tokenId)
        .execute();
    },
  };
}

/** One conditional UPDATE: concurrent requests can never push `used` past the limit. */
async function spend(ctx: AppContext, tokenId: string, cost: number, limit: number, expiresUs: number): Promise<void> {
  const db = ctx.db.kysely;
  await db
    .insertInto('token_usage')
    .values({ token_id: tokenId, used: 0, expires_us: expiresUs })
    .onConflict((oc) => oc.column('token_id').doNothing())
    .execute();
  const res = await db
    .updateTable('token_usage')
    .set({ used: sql<number>`used + ${cost}` })
    .where('token_id', '=', tokenId)
    .where(sql<boolean>`used + ${cost} <= ${limit}`)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) {
    throw new AppError(403, 'OperationsLimitExceededError', 'The token has spent all its operations.');
  }
}
