/**
 * Groups: upload /group/ and /group/info/, REST /groups/, CDN group URLs and archives.
 * Also copies (REST /files/local_copy/, /files/remote_copy/ to custom storages), which share the
 * file-reference parsing of group entries.
 */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { groupCdnHandler, type DeliverFile } from './cdn.js';
import { copyRoutes } from '../copies/rest.js';
import { groupRestRoutes } from './rest.js';
import { groupRoutes } from './upload.js';
import { GroupService } from './service.js';

/** `deliver` is the CDN's file delivery, present on nodes that serve the CDN. */
export function groupsFeature(ctx: AppContext, deps: { deliver: DeliverFile | null }): Feature {
  const groups = new GroupService(ctx);
  return {
    name: 'groups',
    restRoutes: async (app) => {
      await app.register(groupRestRoutes(ctx, groups));
      await app.register(copyRoutes(ctx));
    },
    uploadRoutes: groupRoutes(ctx, groups),
    ...(deps.deliver && { cdn: { group: groupCdnHandler(ctx, groups, deps.deliver) } }),
  };
}
