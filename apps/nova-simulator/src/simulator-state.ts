import { randomBytes, randomUUID } from 'node:crypto';
import { FaultRegistry } from './faults';
import { ApiError } from './http-kit';
import { IdentityStore, stableId } from './identity';
import { schedule, type Flavor, type GroupPlacement, type GroupPolicy, type HostLoad } from './scheduler';
import { resolveHosts, type HostCapacity, type ResolvedHost, type Topology } from './topology';

/**
 * Everything the simulated cloud knows. Servers change state lazily: a read after `readyAt`
 * sees the build finished, a read after `goneAt` no longer finds a deleted server. No timers.
 */

export interface FlavorRecord extends Flavor {
  id: string;
  name: string;
}

/** The flavors of the reference cloud (ids and sizes as `bootstrap.py` creates them). */
export const FLAVORS: FlavorRecord[] = [
  { id: '1', name: 'm1.tiny', vcpus: 1, ram: 512, disk: 1 },
  { id: '2', name: 'm1.small', vcpus: 1, ram: 2048, disk: 20 },
  { id: '3', name: 'm1.medium', vcpus: 2, ram: 4096, disk: 40 },
  { id: '4', name: 'm1.large', vcpus: 4, ram: 8192, disk: 80 },
  { id: '5', name: 'm1.xlarge', vcpus: 8, ram: 16384, disk: 160 },
];

/** A 32-hex stable id shaped as a UUID. */
export const stableUuid = (kind: string, name: string): string => {
  const h = stableId(kind, name);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

export const IMAGE = { id: stableUuid('image', 'cirros-fake'), name: 'cirros-fake' };

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'ERROR' | 'DELETED';

export interface ServerFault {
  code: number;
  message: string;
  details: string;
  created: number;
}

export interface SimServer {
  id: string;
  name: string;
  projectId: string;
  userId: string;
  flavor: FlavorRecord;
  imageRef: string;
  metadata: Record<string, string>;
  keyName: string | null;
  userData: string | null;
  description: string | null;
  tags: string[];
  adminPass: string;
  requestedZone: string | null;
  groupId: string | null;
  /** decided at create time; shown once the build delay has passed (host shows during BUILD too) */
  host: ResolvedHost | null;
  outcome: 'ACTIVE' | 'ERROR';
  fault: ServerFault | null;
  createdAt: number;
  readyAt: number;
  deletedAt: number | null;
  goneAt: number | null;
  instanceNumber: number;
  reservationId: string;
}

export interface SimServerGroup {
  id: string;
  name: string;
  policy: GroupPolicy;
  rules: { max_server_per_host?: number };
  members: string[];
  projectId: string;
  userId: string;
}

export interface CreateServerInput {
  name: string;
  projectId: string;
  userId: string;
  flavor: FlavorRecord;
  imageRef: string;
  metadata: Record<string, string>;
  keyName: string | null;
  userData: string | null;
  description: string | null;
  tags: string[];
  zone: string | null;
  forcedHost: string | null;
  forcedNode: string | null;
  requestedHost: string | null;
  requestedNode: string | null;
  group: SimServerGroup | null;
}

export interface StateOptions {
  topology: Topology;
  buildDelayMs: number;
  adminPassword: string;
  demoPassword: string;
  tokenLifetimeMs: number;
  now?: () => number;
}

export class SimulatorState {
  readonly identity: IdentityStore;
  readonly hosts: ResolvedHost[];
  readonly faults = new FaultRegistry();
  readonly now: () => number;
  buildDelayMs: number;
  private readonly initialBuildDelayMs: number;
  private readonly serverMap = new Map<string, SimServer>();
  private readonly groupMap = new Map<string, SimServerGroup>();
  private instanceCounter = 0;

  constructor(options: StateOptions) {
    this.now = options.now ?? Date.now;
    this.hosts = resolveHosts(options.topology);
    this.buildDelayMs = this.initialBuildDelayMs = options.buildDelayMs;
    this.identity = new IdentityStore({
      adminPassword: options.adminPassword,
      demoPassword: options.demoPassword,
      tokenLifetimeMs: options.tokenLifetimeMs,
      now: this.now,
    });
  }

  /** Project id by name (`admin`, `demo`, `alt_demo`). */
  projectId(name: string): string {
    const p = this.identity.projectByName(name);
    if (!p) throw new Error(`no project named ${name}`);
    return p.id;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.serverMap) if (s.goneAt !== null && s.goneAt <= now) this.serverMap.delete(id);
  }

  status(s: SimServer): ServerStatus {
    if (s.deletedAt !== null) return 'DELETED';
    return this.now() < s.readyAt ? 'BUILD' : s.outcome;
  }

  /** Every server still visible, oldest first. */
  servers(): SimServer[] {
    this.sweep();
    return [...this.serverMap.values()];
  }

  server(id: string): SimServer | undefined {
    this.sweep();
    return this.serverMap.get(id);
  }

  groups(): SimServerGroup[] {
    return [...this.groupMap.values()];
  }

  group(id: string): SimServerGroup | undefined {
    return this.groupMap.get(id);
  }

  /** What each host holds: every server with a host that is not deleted counts. */
  loads(): HostLoad[] {
    const servers = this.servers().filter((s) => s.host !== null && s.deletedAt === null);
    return this.hosts.map((host) => {
      const used: HostCapacity = { instances: 0, vcpus: 0, ram_mb: 0, disk_gb: 0 };
      for (const s of servers) {
        if (s.host?.name !== host.name) continue;
        used.instances += 1;
        used.vcpus += s.flavor.vcpus;
        used.ram_mb += s.flavor.ram;
        used.disk_gb += s.flavor.disk;
      }
      return { host, used };
    });
  }

  createGroup(input: Omit<SimServerGroup, 'id' | 'members'>): SimServerGroup {
    const group: SimServerGroup = { ...input, id: randomUUID(), members: [] };
    this.groupMap.set(group.id, group);
    return group;
  }

  deleteGroup(id: string): boolean {
    return this.groupMap.delete(id);
  }

  /** Schedules at once, so concurrent creates into one group see each other's hosts. */
  createServer(input: CreateServerInput): SimServer {
    const now = this.now();
    const group = input.group;
    let placement: GroupPlacement | null = null;
    if (group) {
      const memberHosts = group.members
        .map((id) => this.server(id))
        .filter((s): s is SimServer => s !== undefined && s.host !== null && s.deletedAt === null)
        .map((s) => s.host!.name);
      placement = { policy: group.policy, maxServerPerHost: group.rules.max_server_per_host ?? null, memberHosts };
    }
    const result = schedule(
      {
        flavor: input.flavor,
        zone: input.zone,
        forcedHost: input.forcedHost,
        forcedNode: input.forcedNode,
        requestedHost: input.requestedHost,
        requestedNode: input.requestedNode,
        group: placement,
      },
      this.loads(),
    );
    this.instanceCounter += 1;
    const id = randomUUID();
    const readyAt = now + this.buildDelayMs;
    const server: SimServer = {
      id,
      name: input.name,
      projectId: input.projectId,
      userId: input.userId,
      flavor: input.flavor,
      imageRef: input.imageRef,
      metadata: input.metadata,
      keyName: input.keyName,
      userData: input.userData,
      description: input.description,
      tags: input.tags,
      adminPass: randomBytes(9).toString('base64url').slice(0, 12),
      requestedZone: input.zone,
      groupId: group?.id ?? null,
      host: result.ok ? result.host : null,
      outcome: result.ok ? 'ACTIVE' : 'ERROR',
      fault: result.ok
        ? null
        : {
            code: 500,
            message: result.message,
            details: [
              'Traceback (most recent call last):',
              '  File "/usr/lib/python3/dist-packages/nova/conductor/manager.py", line 1587, in schedule_and_build_instances',
              '    host_lists = self._schedule_instances(context, request_specs[0], ...(simulated)',
              `nova.exception.NoValidHost: ${result.message}`,
              `Scheduler trace: ${result.trace.join(', ')}`,
            ].join('\n'),
            created: readyAt,
          },
      createdAt: now,
      readyAt,
      deletedAt: null,
      goneAt: null,
      instanceNumber: this.instanceCounter,
      reservationId: 'r-' + randomBytes(6).toString('hex').slice(0, 8),
    };
    this.serverMap.set(id, server);
    // Nova adds the member at the API, before scheduling: failed builds stay members too.
    group?.members.push(id);
    return server;
  }

  /** The server goes DELETED at once (host freed, group left) and disappears after the build delay. */
  deleteServer(s: SimServer): void {
    if (s.deletedAt !== null) return;
    const now = this.now();
    s.deletedAt = now;
    s.goneAt = now + this.buildDelayMs;
    if (s.groupId) {
      const g = this.groupMap.get(s.groupId);
      if (g) g.members = g.members.filter((m) => m !== s.id);
    }
    this.sweep();
  }

  /** Test control: move a server as an evacuation would, without any group or capacity check. */
  migrate(id: string, hostName: string): SimServer {
    const s = this.server(id);
    if (!s) throw new ApiError(404, `Instance ${id} could not be found.`);
    const host = this.hosts.find((h) => h.name === hostName);
    if (!host) throw new ApiError(400, `Compute host ${hostName} could not be found.`);
    if (s.deletedAt !== null) throw new ApiError(409, `Cannot migrate instance ${id} while it is DELETED`);
    s.host = host;
    if (s.outcome === 'ERROR') {
      s.outcome = 'ACTIVE';
      s.fault = null;
    }
    return s;
  }

  /** `POST /_sim/reset`: no servers, groups or faults; the build delay as configured at start. */
  reset(): void {
    this.serverMap.clear();
    this.groupMap.clear();
    this.faults.clear();
    this.buildDelayMs = this.initialBuildDelayMs;
    this.identity.reset();
  }

  expireAllTokens(): number {
    return this.identity.expireAll();
  }

  /** `GET /_sim/state`: where everything is. */
  snapshot(): Record<string, unknown> {
    return {
      servers: this.servers().map((s) => ({
        id: s.id,
        name: s.name,
        project_id: s.projectId,
        status: this.status(s),
        host: s.host?.name ?? null,
        hypervisor_hostname: s.host?.hypervisorHostname ?? null,
        zone: s.host?.zone ?? null,
        group: s.groupId,
        metadata: s.metadata,
        fault: s.fault?.message ?? null,
      })),
      server_groups: this.groups().map((g) => ({
        id: g.id,
        name: g.name,
        policy: g.policy,
        rules: g.rules,
        members: [...g.members],
        project_id: g.projectId,
      })),
      hosts: this.loads().map((l) => ({
        name: l.host.name,
        zone: l.host.zone,
        hypervisor_hostname: l.host.hypervisorHostname,
        capacity: l.host.capacity,
        used: l.used,
      })),
      config: { build_delay_ms: this.buildDelayMs, token_lifetime_seconds: this.identity.tokenLifetimeMs / 1000 },
    };
  }
}
