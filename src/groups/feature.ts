/** Groups: upload /group/ and /group/info/, REST /groups/, CDN group URLs and archives. */
import type { AppContext } from '../context.js';
import type { DeliverFile, Feature } from '../feature.js';
import { groupCdnHandler } from './cdn.js';
import { groupRestRoutes } from './rest.js';
import { groupRoutes } from './upload.js';
import { GroupService } from './service.js';

/** `deliver`: the CDN's file delivery, on nodes that serve the CDN. */
export function groupsFeature(ctx: AppContext, deps: { deliver: DeliverFile | null }): Feature {
  const groups = new GroupService(ctx);
  return {
    name: 'groups',
    restRoutes: groupRestRoutes(ctx, groups),
    uploadRoutes: groupRoutes(ctx, groups),
    ...(deps.deliver && { cdn: { group: groupCdnHandler(ctx, groups, deps.deliver) } }),
  };
}
