import { randomBytes, randomUUID } from 'node:crypto';
import { FaultRegistry } from './faults';
import { ApiError } from './http-kit';
import { IdentityStore, stableId, type PersistedIdentity } from './identity';
import { groupPolicyViolation, schedule, type Flavor, type GroupPlacement, type GroupPolicy, type HostLoad } from './scheduler';
import { resolveHosts, type HostCapacity, type ResolvedHost, type Topology } from './topology';

/**
 * Everything the simulated cloud knows. Time moves lazily, without timers: every read first
 * replays what has happened since the last one, in time order (a server's scheduling at its
 * `scheduleAt`, a deleted server's end), so what a client sees depends only on the clock, never
 * on when it looked.
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
/** Glance's images: the reference cloud's, and a second one to rebuild servers (profile updates) with */
export const IMAGES = [IMAGE, { id: stableUuid('image', 'cirros-fake-alt'), name: 'cirros-fake-alt' }];

/** The shared networks of the reference cloud (devstack's names), owned by the admin project. */
export const NETWORKS = [
  { id: stableUuid('network', 'private'), name: 'private', external: false, projectId: stableId('project', 'admin') },
  { id: stableUuid('network', 'public'), name: 'public', external: true, projectId: stableId('project', 'admin') },
];

export type ServerStatus =
  | 'BUILD' | 'ACTIVE' | 'ERROR' | 'DELETED'
  | 'SHUTOFF' | 'PAUSED' | 'SUSPENDED' | 'RESCUE' | 'REBOOT' | 'HARD_REBOOT' | 'REBUILD' | 'PASSWORD' | 'VERIFY_RESIZE'
  | 'RESIZE' | 'REVERT_RESIZE';
export type TaskState =
  | 'scheduling' | 'spawning' | 'deleting'
  | 'rebooting' | 'rebooting_hard' | 'rebuilding' | 'powering-on' | 'powering-off' | 'pausing' | 'unpausing' | 'suspending'
  | 'resuming' | 'rescuing' | 'unrescuing' | 'updating_password' | 'resize_migrating' | 'resize_reverting'
  | null;

/** Nova's vm_state of a built server, as server actions change it. */
export type VmState = 'active' | 'stopped' | 'paused' | 'suspended' | 'rescued' | 'resized';

/** A server action under way: shown as `status`/`taskState` until `until`, then the server is `then`. */
export interface ServerTask {
  status: ServerStatus;
  taskState: TaskState;
  until: number;
  then: VmState;
}

export interface ServerFault {
  code: number;
  message: string;
  details: string;
  /** when the server turns ERROR (and the fault is shown) */
  created: number;
}

/** What the scheduler is asked, kept until it runs. */
export interface PlacementRequest {
  zone: string | null;
  forcedHost: string | null;
  forcedNode: string | null;
  requestedHost: string | null;
  requestedNode: string | null;
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
  request: PlacementRequest;
  groupId: string | null;
  createdAt: number;
  /** when nova-scheduler picks the host: until then BUILD/scheduling without a host */
  scheduleAt: number;
  /** when the compute host has claimed it: from then on the scheduler's group filters see its host */
  claimAt: number;
  /** when the build ends: ACTIVE, or ERROR for a failure on the compute host */
  readyAt: number;
  /** the scheduler has run */
  scheduled: boolean;
  /** the host it holds (capacity, group policies); null before scheduling and after a failure */
  host: ResolvedHost | null;
  /** the host shown while it spawns (where the build ran, also for one that then fails) */
  buildHost: ResolvedHost | null;
  /** `OS-EXT-AZ:availability_zone`: the requested zone, then (once scheduled) its host's */
  zone: string | null;
  /** decided by the scheduler; null before */
  outcome: 'ACTIVE' | 'ERROR' | null;
  fault: ServerFault | null;
  /** DELETE accepted: `task_state` deleting until `destroyedAt`, then DELETED until `goneAt` */
  deletedAt: number | null;
  destroyedAt: number | null;
  goneAt: number | null;
  instanceNumber: number;
  reservationId: string;
  /** once built: changed by server actions (absent = active) */
  vmState?: VmState;
  /** a server action under way */
  task?: ServerTask | null;
  /** when a request last changed the server itself (its name, metadata or lock), or an action on it began or ended */
  touchedAt?: number;
  locked?: boolean;
  /** a resize waiting in VERIFY_RESIZE: the flavor a revert goes back to, the vm_state a confirm or revert returns to */
  resize?: { oldFlavor: FlavorRecord; from: VmState } | null;
  /** what `GET /servers/{id}/os-instance-actions` lists: each accepted request that acted on it, oldest first */
  actions?: SimInstanceAction[];
}

/** One instance action as Nova records it (its `instance_actions` table): the request that asked for it. */
export interface SimInstanceAction {
  /** Nova's name for it: create, delete, reboot, rebuild, resize, confirmResize, stop, start, ... */
  action: string;
  /** the x-openstack-request-id of the request that asked for it */
  requestId: string;
  userId: string;
  projectId: string;
  startedAt: number;
}

export interface PersistedSimulatorState {
  servers: SimServer[];
  server_groups: SimServerGroup[];
  instance_counter: number;
  identity: PersistedIdentity;
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

/** A create request: the server's fields as the caller gave them, where to place it, and its group. */
export interface CreateServerInput
  extends Pick<SimServer, 'name' | 'projectId' | 'userId' | 'flavor' | 'imageRef' | 'metadata' | 'keyName' | 'userData' | 'description' | 'tags'>,
    PlacementRequest {
  group: SimServerGroup | null;
}

export interface StateOptions {
  topology: Topology;
  buildDelayMs: number;
  adminPassword: string;
  demoPassword: string;
  /** default 'service-secret' */
  servicePassword?: string;
  tokenLifetimeMs: number;
  now?: () => number;
}

/** What a client sees of a server at one moment. */
export interface ServerPhase {
  status: ServerStatus;
  taskState: TaskState;
  /** `OS-EXT-SRV-ATTR:host` (and hostId, node): null while scheduling and after a failure */
  host: ResolvedHost | null;
}

const traceback = (frames: string[], exception: string): string =>
  ['Traceback (most recent call last):', ...frames, `${exception} (simulated)`].join('\n');

const VM_STATUS: Record<VmState, ServerStatus> = {
  active: 'ACTIVE',
  stopped: 'SHUTOFF',
  paused: 'PAUSED',
  suspended: 'SUSPENDED',
  rescued: 'RESCUE',
  resized: 'VERIFY_RESIZE',
};

/** how many gone servers a simulator keeps for lists by changes-since */
const DELETED_ROWS_KEPT = 10_000;

export class SimulatorState {
  readonly identity: IdentityStore;
  readonly hosts: ResolvedHost[];
  private hostIndexes: Map<string, number> | null = null;
  readonly faults = new FaultRegistry();
  readonly now: () => number;
  buildDelayMs: number;
  private readonly initialBuildDelayMs: number;
  private readonly baseClock: () => number;
  private clockOffsetMs = 0;
  private readonly serverMap = new Map<string, SimServer>();
  /**
   * Servers deleted and gone (404), as Nova keeps their soft-deleted rows (until `nova-manage db
   * archive_deleted_rows`): a list by `changes-since` still shows them, DELETED. The latest
   * DELETED_ROWS_KEPT, not saved with the state.
   */
  private readonly deletedRows: SimServer[] = [];
  private readonly groupMap = new Map<string, SimServerGroup>();
  /** created, not yet scheduled */
  private pending: SimServer[] = [];
  private nextGoneAt = Infinity;
  private instanceCounter = 0;

  constructor(options: StateOptions) {
    this.baseClock = options.now ?? Date.now;
    this.now = () => this.baseClock() + this.clockOffsetMs;
    this.hosts = resolveHosts(options.topology);
    this.buildDelayMs = this.initialBuildDelayMs = options.buildDelayMs;
    this.identity = new IdentityStore({
      adminPassword: options.adminPassword,
      demoPassword: options.demoPassword,
      servicePassword: options.servicePassword ?? 'service-secret',
      tokenLifetimeMs: options.tokenLifetimeMs,
      now: this.now,
    });
  }

  /** Project id by name (`admin`, `demo`, `alt_demo`, `service`). */
  projectId(name: string): string {
    const p = this.identity.projectByName(name);
    if (!p) throw new Error(`no project named ${name}`);
    return p.id;
  }

  /** Test control: moves the simulated clock forward (builds, deletes and token lifetimes follow). */
  advanceClock(ms: number): void {
    if (!Number.isInteger(ms) || ms < 0) throw new Error(`advanceClock: ms must be a whole number >= 0, got ${ms}`);
    this.clockOffsetMs += ms;
  }

  /** Replays everything due by now: the scheduler for each pending server (in time order), then the sweep. */
  private advance(): void {
    const now = this.now();
    if (this.pending.length > 0 && this.pending.some((s) => s.scheduleAt <= now)) {
      const due = this.pending.filter((s) => s.scheduleAt <= now);
      this.pending = this.pending.filter((s) => s.scheduleAt > now);
      due.sort((a, b) => a.scheduleAt - b.scheduleAt || a.instanceNumber - b.instanceNumber);
      for (const s of due) this.place(s);
    }
    if (now >= this.nextGoneAt) this.sweep(now);
  }

  private sweep(now: number): void {
    this.nextGoneAt = Infinity;
    for (const [id, s] of this.serverMap) {
      if (s.goneAt === null) continue;
      if (s.goneAt > now) {
        this.nextGoneAt = Math.min(this.nextGoneAt, s.goneAt);
        continue;
      }
      this.serverMap.delete(id);
      this.deletedRows.push(s);
      if (this.deletedRows.length > DELETED_ROWS_KEPT) this.deletedRows.shift();
      const g = s.groupId ? this.groupMap.get(s.groupId) : undefined;
      if (g) g.members = g.members.filter((m) => m !== id);
    }
  }

  /** Whether a server occupies its host at time `t` (a deleted one until its host is done with it). */
  private holdsHostAt(s: SimServer, t: number): boolean {
    return s.host !== null && (s.destroyedAt === null || s.destroyedAt > t);
  }

  private loadsAt(t: number): HostLoad[] {
    // one pass over the servers, not one per host: the scheduler asks for every placement, and
    // 10,000 hosts × 10,000 servers per placement was more than a benchmark could wait for
    const usedOn = new Map<string, HostCapacity>();
    for (const s of this.serverMap.values()) {
      if (!s.host || !this.holdsHostAt(s, t)) continue;
      let used = usedOn.get(s.host.name);
      if (!used) usedOn.set(s.host.name, (used = { instances: 0, vcpus: 0, ram_mb: 0, disk_gb: 0 }));
      used.instances += 1;
      used.vcpus += s.flavor.vcpus;
      used.ram_mb += s.flavor.ram;
      used.disk_gb += s.flavor.disk;
    }
    return this.hosts.map((host) => ({ host, used: usedOn.get(host.name) ?? { instances: 0, vcpus: 0, ram_mb: 0, disk_gb: 0 } }));
  }

  /** A host's place in the topology (0-based), -1 for a name it does not have. */
  hostIndex(name: string): number {
    if (!this.hostIndexes) this.hostIndexes = new Map(this.hosts.map((h, i) => [h.name, i]));
    return this.hostIndexes.get(name) ?? -1;
  }

  /**
   * nova-scheduler, then the compute host's late group check, for one server at its `scheduleAt`.
   * Placement claims are atomic, so capacity counts every server placed before. The group filters
   * only see members a compute host has claimed (`claimAt` passed): members being scheduled at
   * nearly the same moment are invisible to each other there, as in Nova, and the late check
   * (which sees every placed member) sends the loser to its alternates and, when they are used up,
   * to ERROR with "Exceeded maximum number of retries".
   */
  private place(s: SimServer): void {
    const t = s.scheduleAt;
    const group = s.groupId ? this.groupMap.get(s.groupId) : undefined;
    const placedMembers = (group?.members ?? [])
      .map((id) => this.serverMap.get(id))
      .filter((m): m is SimServer => m !== undefined && m !== s && m.scheduled && this.holdsHostAt(m, t));
    const placement = (members: SimServer[]): GroupPlacement | null =>
      group
        ? { policy: group.policy, maxServerPerHost: group.rules.max_server_per_host ?? null, memberHosts: members.map((m) => m.host!.name) }
        : null;
    const result = schedule(
      { flavor: s.flavor, ...s.request, group: placement(placedMembers.filter((m) => m.claimAt <= t)) },
      this.loadsAt(t),
    );
    s.scheduled = true;
    if (!result.ok) {
      s.outcome = 'ERROR';
      s.fault = {
        code: 500,
        message: result.message,
        details: traceback(
          [
            '  File "/usr/lib/python3/dist-packages/nova/conductor/manager.py", line 1587, in schedule_and_build_instances',
            '    host_lists = self._schedule_instances(context, request_specs[0],',
          ],
          `nova.exception.NoValidHost: ${result.message}\nScheduler trace: ${result.trace.join(', ')}`,
        ),
        created: t,
      };
      return;
    }
    // The conductor records the zone of the first host it sends the build to.
    s.zone = result.host.zone;
    const late = placement(placedMembers);
    const attempts = [result.host, ...result.alternates];
    let violation: string | null = null;
    for (const host of attempts) {
      s.buildHost = host;
      violation = late ? groupPolicyViolation(late, host.name) : null;
      if (violation === null) {
        s.host = host;
        s.outcome = 'ACTIVE';
        return;
      }
    }
    s.outcome = 'ERROR';
    if (result.forced) {
      // No retry information for a forced host: the compute's own reason becomes the fault.
      s.fault = {
        code: 500,
        message: violation!,
        details: traceback(
          ['  File "/usr/lib/python3/dist-packages/nova/compute/manager.py", line 2447, in _build_and_run_instance'],
          `nova.exception.RescheduledException: Build of instance ${s.id} was re-scheduled: ${violation}`,
        ),
        created: s.readyAt,
      };
      return;
    }
    const message = `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${s.id}.`;
    s.fault = {
      code: 500,
      message,
      details: traceback(
        ['  File "/usr/lib/python3/dist-packages/nova/conductor/manager.py", line 712, in build_instances', '    raise exception.MaxRetriesExceeded(reason=msg)'],
        `nova.exception.MaxRetriesExceeded: ${message}\nCompute late checks: ${attempts.map((h) => `${h.name}: ${violation}`).join(', ')}`,
      ),
      created: s.readyAt,
    };
  }

  /** What a client sees of the server now. */
  phase(s: SimServer): ServerPhase {
    this.advance();
    const now = this.now();
    if (s.destroyedAt !== null && s.destroyedAt <= now) return { status: 'DELETED', taskState: null, host: s.host ?? s.buildHost };
    const deleting = s.deletedAt !== null;
    let phase: ServerPhase;
    if (!s.scheduled) phase = { status: 'BUILD', taskState: 'scheduling', host: null };
    else if (s.outcome === 'ERROR' && s.fault!.created <= now) phase = { status: 'ERROR', taskState: null, host: null };
    else if (now < s.readyAt) phase = { status: 'BUILD', taskState: 'spawning', host: s.buildHost };
    else phase = this.afterBuild(s, now);
    return deleting ? { ...phase, taskState: 'deleting' } : phase;
  }

  /** A built server: its vm_state, or the action under way on it. */
  private afterBuild(s: SimServer, now: number): ServerPhase {
    if (s.task && now < s.task.until) return { status: s.task.status, taskState: s.task.taskState, host: s.host };
    if (s.task) {
      s.vmState = s.task.then;
      s.touchedAt = s.task.until;
      s.task = null;
    }
    return { status: VM_STATUS[s.vmState ?? 'active'], taskState: null, host: s.host };
  }

  /**
   * Starts a server action the route has checked: the server shows `status`/`taskState` for half
   * the build delay, then settles in `then`.
   */
  startTask(s: SimServer, status: ServerStatus, taskState: TaskState, then: VmState): void {
    this.phase(s);
    s.touchedAt = this.now();
    s.task = { status, taskState, until: this.now() + Math.floor(this.buildDelayMs / 2), then };
  }

  /**
   * When Nova last changed the server, the last change a client could have seen: its `updated`, and
   * what `changes-since` compares. The latest of its creation, scheduling, launch or fault, delete
   * and end, a request that changed it (name, metadata, lock) and the start or end of an action.
   */
  changedAt(s: SimServer): number {
    const { status } = this.phase(s);
    const now = this.now();
    const launched = s.outcome === 'ACTIVE' && s.readyAt <= now && status !== 'BUILD';
    return Math.max(
      s.createdAt,
      s.scheduled ? s.scheduleAt : 0,
      launched ? s.readyAt : 0,
      status === 'ERROR' ? s.fault!.created : 0,
      s.deletedAt ?? 0,
      status === 'DELETED' ? s.destroyedAt! : 0,
      s.touchedAt ?? 0,
    );
  }

  /** The built server's vm_state now (null while it builds, fails, is busy or is being deleted). */
  vmStateOf(s: SimServer): { vmState: VmState | null; busy: TaskState } {
    const phase = this.phase(s);
    if (phase.taskState !== null) return { vmState: null, busy: phase.taskState };
    if (phase.status === 'BUILD' || phase.status === 'ERROR' || phase.status === 'DELETED') return { vmState: null, busy: null };
    return { vmState: s.vmState ?? 'active', busy: null };
  }

  status(s: SimServer): ServerStatus {
    return this.phase(s).status;
  }

  /** Every server still visible, oldest first. */
  servers(): SimServer[] {
    this.advance();
    return [...this.serverMap.values()];
  }

  /** the servers that are gone, as Nova's soft-deleted rows (deletedRows) */
  goneServers(): SimServer[] {
    this.advance();
    return [...this.deletedRows];
  }

  server(id: string): SimServer | undefined {
    this.advance();
    return this.serverMap.get(id);
  }

  groups(): SimServerGroup[] {
    this.advance();
    return [...this.groupMap.values()];
  }

  group(id: string): SimServerGroup | undefined {
    this.advance();
    return this.groupMap.get(id);
  }

  /** The group's members as Nova lists them: every server of the group not yet destroyed (ERROR ones too). */
  groupMembers(g: SimServerGroup): string[] {
    this.advance();
    const now = this.now();
    return g.members.filter((id) => {
      const s = this.serverMap.get(id);
      return s !== undefined && (s.destroyedAt === null || s.destroyedAt > now);
    });
  }

  /** What each host holds now: every placed server until its delete has freed the host. */
  loads(): HostLoad[] {
    this.advance();
    return this.loadsAt(this.now());
  }

  createGroup(input: Omit<SimServerGroup, 'id' | 'members'>): SimServerGroup {
    const group: SimServerGroup = { ...input, id: randomUUID(), members: [] };
    this.groupMap.set(group.id, group);
    return group;
  }

  /** Its members stay, without a group: they show `server_groups: []` from now on. */
  deleteGroup(id: string): boolean {
    this.advance();
    return this.groupMap.delete(id);
  }

  /**
   * Accepts the server as nova-api does: BUILD, a member of its group at once, no host. The
   * scheduler runs a quarter of the build delay later, the compute host claims it at half, and
   * the build ends at the full delay (0: all at the next read).
   */
  createServer(input: CreateServerInput): SimServer {
    this.advance();
    const now = this.now();
    const delay = this.buildDelayMs;
    this.instanceCounter += 1;
    const id = randomUUID();
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
      request: {
        zone: input.zone,
        forcedHost: input.forcedHost,
        forcedNode: input.forcedNode,
        requestedHost: input.requestedHost,
        requestedNode: input.requestedNode,
      },
      groupId: input.group?.id ?? null,
      createdAt: now,
      scheduleAt: now + Math.floor(delay / 4),
      claimAt: now + Math.floor(delay / 2),
      readyAt: now + delay,
      scheduled: false,
      host: null,
      buildHost: null,
      zone: input.zone,
      outcome: null,
      fault: null,
      deletedAt: null,
      destroyedAt: null,
      goneAt: null,
      instanceNumber: this.instanceCounter,
      reservationId: 'r-' + randomBytes(6).toString('hex').slice(0, 8),
    };
    this.serverMap.set(id, server);
    this.pending.push(server);
    // Nova adds the member at the API, before scheduling: failed builds stay members too.
    input.group?.members.push(id);
    return server;
  }

  /**
   * A server without a host (still scheduling, or failed) is deleted by nova-api itself: gone at
   * once. One on a host shows `task_state` deleting for half the build delay (still holding its
   * host and group place), then DELETED until the full delay, then 404. Deleting again while it
   * is deleting changes nothing.
   */
  deleteServer(s: SimServer): void {
    const { host } = this.phase(s);
    if (s.deletedAt !== null) return;
    const now = this.now();
    s.deletedAt = now;
    if (host === null) {
      s.destroyedAt = s.goneAt = now;
      this.pending = this.pending.filter((p) => p !== s);
    } else {
      s.destroyedAt = now + Math.floor(this.buildDelayMs / 2);
      s.goneAt = now + this.buildDelayMs;
    }
    this.nextGoneAt = Math.min(this.nextGoneAt, s.goneAt);
    this.advance();
  }

  /** Test control: move a server as an evacuation would, without any group or capacity check. */
  migrate(id: string, hostName: string): SimServer {
    const s = this.server(id);
    if (!s) throw new ApiError(404, `Instance ${id} could not be found.`);
    const host = this.hosts.find((h) => h.name === hostName);
    if (!host) throw new ApiError(400, `Compute host ${hostName} could not be found.`);
    if (s.deletedAt !== null) throw new ApiError(409, `Cannot migrate instance ${id} while it is being deleted`);
    this.pending = this.pending.filter((p) => p !== s);
    s.scheduled = true;
    s.host = s.buildHost = host;
    s.zone = host.zone;
    // Nova saves the instance on its new host: its updated_at (what changes-since compares) moves
    s.touchedAt = this.now();
    if (s.outcome !== 'ACTIVE') {
      s.outcome = 'ACTIVE';
      s.fault = null;
    }
    return s;
  }

  /** `POST /_sim/reset`: no servers, groups or faults; the build delay as configured at start. The clock is not rewound. */
  reset(): void {
    this.serverMap.clear();
    this.deletedRows.length = 0;
    this.groupMap.clear();
    this.pending = [];
    this.nextGoneAt = Infinity;
    this.faults.clear();
    this.buildDelayMs = this.initialBuildDelayMs;
    this.identity.reset();
  }

  expireAllTokens(): number {
    return this.identity.expireAll();
  }

  /**
   * What the simulated cloud holds, for the state file: servers, groups and Keystone's records.
   * Times are wall-clock milliseconds, so builds and deletes under way finish on time after a load.
   */
  exportState(): PersistedSimulatorState {
    return {
      servers: [...this.serverMap.values()],
      server_groups: [...this.groupMap.values()],
      instance_counter: this.instanceCounter,
      identity: this.identity.exportState(),
    };
  }

  /** Replaces servers, groups and Keystone's records with saved ones (at start, before any request). */
  importState(saved: PersistedSimulatorState): void {
    this.serverMap.clear();
    this.groupMap.clear();
    const hostByName = new Map(this.hosts.map((h) => [h.name, h]));
    // a host of the topology it was saved under keeps its record when the topology changed since
    const rebind = (h: ResolvedHost | null) => (h === null ? null : (hostByName.get(h.name) ?? h));
    for (const s of saved.servers) {
      s.host = rebind(s.host);
      s.buildHost = rebind(s.buildHost);
      this.serverMap.set(s.id, s);
    }
    for (const g of saved.server_groups) this.groupMap.set(g.id, g);
    this.pending = saved.servers.filter((s) => !s.scheduled && s.deletedAt === null);
    // reduce, not spread: a large cloud would pass more arguments than a call takes
    this.nextGoneAt = saved.servers.reduce((t, s) => Math.min(t, s.goneAt ?? Infinity), Infinity);
    this.instanceCounter = saved.servers.reduce((n, s) => Math.max(n, s.instanceNumber), saved.instance_counter);
    this.identity.importState(saved.identity);
  }

  /** `GET /_sim/state`: where everything is. */
  snapshot(): Record<string, unknown> {
    return {
      servers: this.servers().map((s) => {
        const phase = this.phase(s);
        return {
          id: s.id,
          name: s.name,
          project_id: s.projectId,
          status: phase.status,
          task_state: phase.taskState,
          host: phase.host?.name ?? null,
          hypervisor_hostname: phase.host?.hypervisorHostname ?? null,
          zone: s.zone,
          group: s.groupId !== null && this.groupMap.has(s.groupId) ? s.groupId : null,
          metadata: s.metadata,
          fault: phase.status === 'ERROR' ? (s.fault?.message ?? null) : null,
        };
      }),
      server_groups: this.groups().map((g) => ({
        id: g.id,
        name: g.name,
        policy: g.policy,
        rules: g.rules,
        members: this.groupMembers(g),
        project_id: g.projectId,
      })),
      hosts: this.loads().map((l) => ({
        name: l.host.name,
        zone: l.host.zone,
        hypervisor_hostname: l.host.hypervisorHostname,
        capacity: l.host.capacity,
        used: l.used,
      })),
      config: {
        build_delay_ms: this.buildDelayMs,
        token_lifetime_seconds: this.identity.tokenLifetimeMs / 1000,
        clock_offset_ms: this.clockOffsetMs,
      },
    };
  }
}
