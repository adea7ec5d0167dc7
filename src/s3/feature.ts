/** The S3-compatible surface over a project's files (docs/s3.md): one handler for every request of the `s3` surface. */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { s3Handler } from './handler.js';
import { noMultipart } from './multipart-routes.js';
import { ObjectService } from './service.js';

export function s3Feature(ctx: AppContext): Feature {
  const service = new ObjectService(ctx);
  return {
    name: 's3',
    s3: s3Handler(ctx, service, noMultipart),
  };
}
