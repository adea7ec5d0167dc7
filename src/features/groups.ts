/**
 * Groups: upload /group/ and /group/info/, REST /groups/, CDN group URLs and archives.
 * Also copies (REST /files/local_copy/, /files/remote_copy/ to custom storages), which share the
 * file-reference parsing of group entries.
 */
import type { AppContext } from '../context.js';
import { GroupService } from '../groups/service.js';
import { groupCdnHandler } from '../http/cdn/group.js';
import { cdnExtensions } from '../http/cdn/server.js';
import { copyRoutes } from '../http/rest/copies.js';
import { groupRestRoutes } from '../http/rest/groups.js';
import { groupRoutes } from '../http/upload/group.js';
import type { Feature } from './types.js';

const services = new WeakMap<AppContext, GroupService>();
const groupsOf = (ctx: AppContext): GroupService => {
  let s = services.get(ctx);
  if (!s) services.set(ctx, (s = new GroupService(ctx)));
  return s;
};

export const groupsFeature: Feature = {
  name: 'groups',
  register(ctx) {
    cdnExtensions.group = groupCdnHandler(groupsOf(ctx));
  },
  restRoutes: (ctx) => async (app) => {
    await app.register(groupRestRoutes(ctx, groupsOf(ctx)));
    await app.register(copyRoutes(ctx));
  },
  uploadRoutes: (ctx) => groupRoutes(ctx, groupsOf(ctx)),
};
