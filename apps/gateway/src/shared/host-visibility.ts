import { Injectable } from '@nestjs/common';
import type { AuthContext } from '@trellis/common';
import { CLOUD_WIDE_PROJECT, CloudFactKinds } from '@trellis/contracts';
import { hideHosts, hostNamesIn } from '@trellis/decisions';
import type { EntityManager } from 'typeorm';

/** Shows a view as its caller may see it; `project` is the project of the object shown. */
export type ShowHosts = <T>(view: T, project: string) => T;

const asIs: ShowHosts = (view) => view;

/**
 * Hypervisor and host names are for cloud admins and project admins (docs/SECURITY.md).
 * Every other caller sees hosts as Nova shows them to non-admins: the hostId of the object's
 * project. The names to hide are the cloud-wide facts (hypervisors, the host → zone map), the hosts
 * the caller's project's nodes recorded, and every host the view itself names (nodes' placements, a
 * stored snapshot's hypervisors, findings).
 */
@Injectable()
export class HostVisibility {
  static seesHosts(caller: AuthContext): boolean {
    return caller.isAdmin || caller.isProjectAdmin;
  }

  /** One read of the facts per request, and only for a caller who may not see names. */
  async forCaller(manager: EntityManager, caller: AuthContext): Promise<ShowHosts> {
    if (HostVisibility.seesHosts(caller)) return asIs;
    // the hosts the caller's nodes recorded too: a message may name one the facts no longer list
    const rows: Array<{ data: unknown }> = await manager.query(
      `SELECT data FROM cloud_facts WHERE project = $1 AND kind IN ($2, $3)
       UNION ALL
       SELECT jsonb_build_object('hosts', coalesce(jsonb_agg(DISTINCT n.data->'placement'->'host'), '[]'::jsonb))
         FROM nodes n WHERE n.project = $4 AND jsonb_typeof(n.data->'placement'->'host') = 'string'`,
      [CLOUD_WIDE_PROJECT, CloudFactKinds.hypervisors, CloudFactKinds.hostZones, caller.projectId],
    );
    const known = hostNamesIn(rows.map((r) => r.data));
    return (view, project) => hideHosts(view, { projectId: project, hostNames: hostNamesIn(view, new Set(known)) });
  }
}
