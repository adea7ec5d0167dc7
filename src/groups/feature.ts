/** Groups: upload /group/ and /group/info/, REST /groups/, CDN group URLs and archives. */
import type { AppContext } from '../context.js';
import type { DeliverFile, Feature, MakeGroup } from '../feature.js';
import { parsePlan } from '../media/plan.js';
import { groupCdnHandler } from './cdn.js';
import { groupRestRoutes } from './rest.js';
import { groupRoutes } from './upload.js';
import { GroupService, groupId } from './service.js';
import { restErrors } from '../core/error-catalogue/rest.js';

/** `deliver`: the CDN's file delivery, on nodes that serve the CDN. */
export function groupsFeature(ctx: AppContext, deps: { deliver: DeliverFile | null }): Feature & { makeGroup: MakeGroup } {
  const groups = new GroupService(ctx);
  const makeGroup: MakeGroup = async (projectId, fileUuids, uuid) => {
    // Made already (a job running again after a crash): the same group, not a duplicate key.
    const existing = uuid ? await groups.find(projectId, `${uuid}~${fileUuids.length}`) : null;
    if (existing) return groupId(existing);
    const refs = fileUuids.map((u) => ({ uuid: u, plan: parsePlan([]), written: [] }));
    const g = await groups.create(projectId, refs, restErrors.notFound, { uuid });
    return groupId(g);
  };
  return {
    name: 'groups',
    restRoutes: groupRestRoutes(ctx, groups),
    uploadRoutes: groupRoutes(ctx, groups),
    ...(deps.deliver && { cdn: { group: groupCdnHandler(ctx, groups, deps.deliver) } }),
    makeGroup,
  };
}
