import { Injectable } from '@nestjs/common';
import { RecentMap, type AuthContext } from '@trellis/common';
import { CLOUD_WIDE_PROJECT, CloudFactKinds } from '@trellis/contracts';
import { HostNames, hideHosts, hostHider, hostNamesIn } from '@trellis/decisions';
import type { EntityManager } from 'typeorm';

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

/** The names a project's members may not see: the facts' and the project's recorded hosts. */
interface ProjectHosts {
  /** project_host_counts.hosts when the project's hosts were read */
  count: number;
  /** the facts the names were added to */
  facts: FactHosts;
  /** the facts' names themselves (no copy) when the facts list every host the project recorded */
  known: HostNames;
}

/**
 * Projects whose names are kept between requests, the least recently asked dropped first. A
 * project whose nodes recorded a host the facts no longer list keeps a copy of the facts' names
 * (a Set of the names: 10,000 took 0.33 MB, so 21 MB if each of these projects had one).
 */
const KEPT_PROJECTS = 64;

/**
 * Hypervisor and host names are for cloud admins and project admins (docs/SECURITY.md).
 * Every other caller sees hosts as Nova shows them to non-admins: the hostId of the object's
 * project. The names to hide are the cloud-wide facts (hypervisors, the host → zone map), every host
 * the caller's project's nodes have recorded (project_hosts, which PostgreSQL keeps), and every host
 * the view itself names (nodes' placements, a stored snapshot's hypervisors, findings).
 *
 * Each request reads versions, not names: the facts' rows' (the nova-worker rewrites a row only when
 * Nova's answer changed; with 10,000 hypervisors their data is 1.8 MB, whose read and walk were
 * 30-45 ms of every member's request) and the project's count of recorded hosts (written with each
 * new one; finding them in the nodes took ~50 ms a request with 10,000 hosts in a project). The names
 * are read again only when one changed (the project's hosts also when the facts changed).
 */
@Injectable()
export class HostVisibility {
  private facts: FactHosts | null = null;
  private readonly projects = new RecentMap<string, ProjectHosts>(KEPT_PROJECTS);

  static seesHosts(caller: AuthContext): boolean {
    return caller.isAdmin || caller.isProjectAdmin;
  }

  /** One read per request, and only for a caller who may not see names. */
  async forCaller(manager: EntityManager, caller: AuthContext): Promise<ShowHosts> {
    if (HostVisibility.seesHosts(caller)) return asIs;
    const [row]: Array<{ version: string | null; hosts: number | null }> = await manager.query(
      `SELECT (SELECT string_agg(${FACT_VERSION}, ', ' ORDER BY f.kind) FROM cloud_facts f WHERE f.project = $1 AND f.kind IN ($2, $3)) AS version,
              (SELECT c.hosts FROM project_host_counts c WHERE c.project = $4) AS hosts`,
      [CLOUD_WIDE_PROJECT, ...FACT_KINDS, caller.projectId],
    );
    const version = row?.version ?? '';
    const facts = this.facts?.version === version ? this.facts : await this.readFacts(manager);
    const known = await this.projectNames(manager, caller.projectId, row?.hosts ?? 0, facts);
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

  /** The facts' names and the project's recorded hosts, read again when the facts changed or the count moved. */
  private async projectNames(manager: EntityManager, project: string, count: number, facts: FactHosts): Promise<HostNames> {
    let kept = this.projects.get(project);
    if (!kept || kept.count !== count || kept.facts !== facts) {
      const hosts =
        count === 0
          ? []
          : ((await manager.query('SELECT host FROM project_hosts WHERE project = $1', [project])) as Array<{ host: string }>).map((r) => r.host);
      kept = { count, facts, known: facts.names.with(hosts) };
      this.projects.set(project, kept);
    }
    return kept.known;
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
