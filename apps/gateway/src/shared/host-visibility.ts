import { Injectable } from '@nestjs/common';
import type { AuthContext } from '@trellis/common';
import { CLOUD_WIDE_PROJECT, CloudFactKinds } from '@trellis/contracts';
import { HostNames, hideHosts, hostHider, hostNamesIn } from '@trellis/decisions';
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

/** The cloud-wide facts that name hosts, as of one version of their rows. */
interface FactHosts {
  /** each row's kind, xmin and fetched_at: any write of a row changes it */
  version: string;
  names: HostNames;
}

const FACT_KINDS = [CloudFactKinds.hypervisors, CloudFactKinds.hostZones];

/** `kind xmin fetched_at` of each row, in kind order: an UPDATE writes a new xmin. */
const FACT_VERSION = `f.kind || ' ' || f.xmin::text || ' ' || f.fetched_at::text`;

/**
 * Hypervisor and host names are for cloud admins and project admins (docs/SECURITY.md).
 * Every other caller sees hosts as Nova shows them to non-admins: the hostId of the object's
 * project. The names to hide are the cloud-wide facts (hypervisors, the host → zone map), the hosts
 * the caller's project's nodes recorded, and every host the view itself names (nodes' placements, a
 * stored snapshot's hypervisors, findings).
 *
 * The facts' names are read again only when a row of them changed (the nova-worker rewrites a row
 * only when Nova's answer changed): each request reads their versions, not their data. With 10,000 hypervisors their
 * data is 1.8 MB, whose read and walk were 30-45 ms of every member's request.
 */
@Injectable()
export class HostVisibility {
  private facts: FactHosts | null = null;

  static seesHosts(caller: AuthContext): boolean {
    return caller.isAdmin || caller.isProjectAdmin;
  }

  /** One read per request, and only for a caller who may not see names. */
  async forCaller(manager: EntityManager, caller: AuthContext): Promise<ShowHosts> {
    if (HostVisibility.seesHosts(caller)) return asIs;
    // the hosts the caller's nodes recorded too: a message may name one the facts no longer list
    const rows: Array<{ version: string | null; hosts: string[] | null }> = await manager.query(
      `SELECT string_agg(${FACT_VERSION}, ', ' ORDER BY f.kind) AS version, NULL::jsonb AS hosts
         FROM cloud_facts f WHERE f.project = $1 AND f.kind IN ($2, $3)
       UNION ALL
       SELECT NULL, coalesce(jsonb_agg(host), '[]'::jsonb) FROM (${PROJECT_HOSTS}) h WHERE host IS NOT NULL`,
      [CLOUD_WIDE_PROJECT, ...FACT_KINDS, caller.projectId],
    );
    const version = rows.find((r) => r.hosts === null)?.version ?? '';
    const facts = this.facts?.version === version ? this.facts : await this.readFacts(manager);
    const known = facts.names.with(rows.find((r) => r.hosts !== null)?.hosts ?? []);
    // The views of a page mostly name no host outside `known` and belong to one project: the
    // hider prepared for (project, known) serves them all, and a view naming more gets its own.
    const hiders = new Map<string, <T>(value: T) => T>();
    return (view, project) => {
      // the view's own names, not a copy of every known one per view (10,000 hosts: a second a page)
      const own = hostNamesIn(view);
      for (const name of own) {
        if (!known.has(name)) return hideHosts(view, { projectId: project, hostNames: known.with(own) });
      }
      let hide = hiders.get(project);
      if (!hide) hiders.set(project, (hide = hostHider({ projectId: project, hostNames: known })));
      return hide(view);
    };
  }

  /** The facts' names with the version they were read at (in the same statement). */
  private async readFacts(manager: EntityManager): Promise<FactHosts> {
    const rows: Array<{ version: string; data: unknown }> = await manager.query(
      `SELECT ${FACT_VERSION} AS version, f.data FROM cloud_facts f WHERE f.project = $1 AND f.kind IN ($2, $3) ORDER BY f.kind`,
      [CLOUD_WIDE_PROJECT, ...FACT_KINDS],
    );
    const facts = { version: rows.map((r) => r.version).join(', '), names: HostNames.of(hostNamesIn(rows.map((r) => r.data))) };
    this.facts = facts;
    return facts;
  }
}
