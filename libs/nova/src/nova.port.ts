/**
 * What Trellis needs from Nova, in Trellis's own words. The HTTP implementation (Keystone v3 auth,
 * service catalog, compute microversions, retries) and the simulator both answer through it; only
 * the nova-worker holds one.
 */

export type ServerGroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';

export interface ServerGroup {
  id: string;
  name: string;
  /** normalised: Nova 2.64+ `policy`, or `policies[0]` on older Nova */
  policy: ServerGroupPolicy;
  rules: Record<string, unknown>;
  members: string[];
}

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'ERROR' | 'DELETED' | 'SHUTOFF' | string;

export interface Server {
  id: string;
  name: string;
  status: ServerStatus;
  /** OS-EXT-AZ:availability_zone */
  availabilityZone: string | null;
  /** OS-EXT-SRV-ATTR:host (admin only; null when not visible) */
  host: string | null;
  /** OS-EXT-SRV-ATTR:hypervisor_hostname (admin only) */
  hypervisorHostname: string | null;
  /** hostId: opaque per-project host hash, visible to everyone */
  hostId: string | null;
  metadata: Record<string, string>;
  /**
   * fault.message when status is ERROR (e.g. "No valid host was found. ..."). Only getServer
   * fills it reliably: real Nova (Zed) leaves `fault` out of `servers/detail`, so listServers
   * gives null for an ERROR server there (the simulator lists it).
   */
  fault: { code: number; message: string } | null;
  /** the image the server was booted or last rebuilt from (absent from a volume-booted server) */
  imageId?: string | null;
  /**
   * the flavor it runs: before compute 2.47 Nova gives its id only, from 2.47 on its name only
   * (`original_name`)
   */
  flavor?: { id: string | null; name: string | null } | null;
  /**
   * when Nova last changed the server (`updated`, its database's `updated_at`, which `changes-since`
   * compares with), as Nova writes it; null or absent when it gave none
   */
  updated?: string | null;
}

/** What listServers narrows the caller's servers to. */
export interface ServerListFilter {
  metadata?: Record<string, string>;
  name?: string;
  changesSince?: Date;
}

/**
 * The server actions Trellis runs for Senlin's node operations and recovery (POST
 * /servers/{id}/action), each in Nova's own terms.
 */
export type ServerAction =
  | { action: 'reboot'; type: 'SOFT' | 'HARD' }
  /** without imageRef the server is rebuilt from the image it runs */
  | { action: 'rebuild'; imageRef?: string; name?: string; adminPass?: string }
  | { action: 'changePassword'; adminPass: string }
  | { action: 'rescue'; rescueImageRef?: string; adminPass?: string }
  | { action: 'evacuate'; host?: string; force?: boolean }
  /** a flavor id, or a flavor name the client looks up; the server then waits in VERIFY_RESIZE */
  | { action: 'resize'; flavorRef: string }
  | { action: 'confirmResize' | 'revertResize' }
  | { action: 'os-start' | 'os-stop' | 'pause' | 'unpause' | 'suspend' | 'resume' | 'lock' | 'unlock' | 'unrescue' | 'migrate' };

export interface ServerCreateRequest {
  name: string;
  /** image id, or a name the client looks up in Glance (when the catalog has an image service) */
  imageRef: string;
  /** flavor id, or a flavor name the client looks up in Nova */
  flavorRef: string;
  /** "none", "auto", or a list of {uuid}/{port}/{fixed_ip} */
  networks: 'none' | 'auto' | Array<Record<string, string>>;
  availabilityZone?: string;
  schedulerHints?: Record<string, unknown>;
  metadata?: Record<string, string>;
  keyName?: string;
  /** plain text; the client base64-encodes it as Nova requires */
  userData?: string;
}

export interface AvailabilityZone {
  name: string;
  available: boolean;
  /** host names, only from the admin /detail view */
  hosts: string[] | null;
}

export interface Hypervisor {
  id: string;
  hypervisorHostname: string;
  serviceHost: string;
  state: string | null;
  status: string | null;
}

export interface CreatedServer {
  id: string;
  uncertain?: boolean;
}

export interface NovaPort {
  /** the compute microversion in use (e.g. "2.64"), after negotiation */
  microversion(): Promise<string>;

  listServerGroups(): Promise<ServerGroup[]>;
  getServerGroup(id: string): Promise<ServerGroup | null>;
  /** by id first, then by exact name; null when neither matches */
  findServerGroup(nameOrId: string): Promise<ServerGroup | null>;
  createServerGroup(name: string, policy: ServerGroupPolicy, rules?: Record<string, unknown>): Promise<ServerGroup>;
  deleteServerGroup(id: string): Promise<void>;

  /**
   * `uncertain`: an earlier try's answer was lost (a timeout, a reset, a 5xx) and the server came from
   * the try after it or was found by its tag; Nova may then hold a second server for the same node
   * (one that became visible only after the look), which whoever follows the node sweeps away.
   */
  createServer(request: ServerCreateRequest): Promise<CreatedServer>;
  getServer(id: string): Promise<Server | null>;
  /**
   * servers of the caller's project whose metadata contains every given key/value; `name` is
   * Nova's name filter, a regular expression; `changesSince`: only servers Nova changed at or after
   * that time (its `changes-since`), deleted ones included with status DELETED
   */
  listServers(filter?: ServerListFilter): Promise<Server[]>;
  deleteServer(id: string): Promise<void>;
  /** Nova accepted the action (it runs on asynchronously: poll getServer for its outcome) */
  serverAction(id: string, action: ServerAction): Promise<void>;
  /** PUT /servers/{id}: a new name (Nova changes it at once) */
  updateServer(id: string, changes: { name: string }): Promise<void>;
  /** PUT /servers/{id}/metadata: the server's metadata becomes exactly `metadata` */
  setServerMetadata(id: string, metadata: Record<string, string>): Promise<void>;

  /** zones servers can be booted into (never Nova's `internal` zone), in both views */
  listAvailabilityZones(detail?: boolean): Promise<AvailabilityZone[]>;
  /** admin only: NovaForbidden when the credentials may not list hypervisors */
  listHypervisors(): Promise<Hypervisor[]>;
}

/** Nest injection token for the NovaPort. */
export const NOVA_PORT = Symbol('NOVA_PORT');
