import { Injectable } from '@nestjs/common';
import type { AuthContext } from '@trellis/common';
import { CLOUD_WIDE_PROJECT, CloudFactKinds } from '@trellis/contracts';
import { hideHosts, hostHider, hostNamesIn } from '@trellis/decisions';
import type { EntityManager } from 'typeorm';

/**
 * The distinct host names the nodes of project $4 recorded, one index probe per host (a loose index
 * scan of the partial index on (project, data.placement.host), migration 1795945000000): with
 * 100,000 nodes in a project, reading them all on every request took 160-270 ms of each node list.
 * The last row is a NULL that ends the walk.
 */
const PROJECT_HOSTS = `
  WITH RECURSIVE walk(host) AS (
    (SELECT n.data->'placement'->>'host' FROM nodes n
      WHERE n.project = $4 AND jsonb_typeof(n.data->'placement'->'host') = 'string'
      ORDER BY 1 LIMIT 1)
    UNION ALL
    SELECT (SELECT n.data->'placement'->>'host' FROM nodes n
             WHERE n.project = $4 AND jsonb_typeof(n.data->'placement'->'host') = 'string' AND n.data->'placement'->>'host' > walk.host
             ORDER BY 1 LIMIT 1)
      FROM walk WHERE walk.host IS NOT NULL
  )
  SELECT host FROM walk`;

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
       SELECT jsonb_build_object('hosts', coalesce(jsonb_agg(host), '[]'::jsonb)) FROM (${PROJECT_HOSTS}) h WHERE host IS NOT NULL`,
      [CLOUD_WIDE_PROJECT, CloudFactKinds.hypervisors, CloudFactKinds.hostZones, caller.projectId],
    );
    const known = hostNamesIn(rows.map((r) => r.data));
    // The views of a page mostly name no host outside `known` and belong to one project: the
    // hider prepared for (project, known) serves them all, and a view naming more gets its own.
    const hiders = new Map<string, <T>(value: T) => T>();
    return (view, project) => {
      // the view's own names, not a copy of every known one per view (10,000 hosts: a second a page)
      const own = hostNamesIn(view);
      for (const name of own) {
        if (!known.has(name)) return hideHosts(view, { projectId: project, hostNames: [...known, ...own] });
      }
      let hide = hiders.get(project);
      if (!hide) hiders.set(project, (hide = hostHider({ projectId: project, hostNames: known })));
      return hide(view);
    };
  }
}
