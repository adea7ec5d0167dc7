/**
 * Groups: upload /group/ and /group/info/, REST /groups/, CDN group URLs and archives.
 * Also copies (REST /files/local_copy/, /files/remote_copy/ to custom storages), which read file
 * references as group entries do (src/http/cdn/file-ref.ts).
 */
import type { AppContext } from '../context.js';
import type { DeliverFile, Feature, RenderStoredFile } from '../feature.js';
import { groupCdnHandler } from './cdn.js';
import { copyRoutes } from '../copies/rest.js';
import { groupRestRoutes } from './rest.js';
import { groupRoutes } from './upload.js';
import { GroupService } from './service.js';

/** `deliver`: the CDN's file delivery, on nodes that serve the CDN; `render`: copies with operations. */
export function groupsFeature(ctx: AppContext, deps: { deliver: DeliverFile | null; render: RenderStoredFile }): Feature {
  const groups = new GroupService(ctx);
  return {
    name: 'groups',
    restRoutes: async (app) => {
      await app.register(groupRestRoutes(ctx, groups));
      await app.register(copyRoutes(ctx, deps.render));
    },
    uploadRoutes: groupRoutes(ctx, groups),
    ...(deps.deliver && { cdn: { group: groupCdnHandler(ctx, groups, deps.deliver) } }),
  };
}
