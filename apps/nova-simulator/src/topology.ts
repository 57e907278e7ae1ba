import { parse as parseYaml } from 'yaml';

/**
 * The simulated cloud: availability zones, their compute hosts and what each host can hold.
 * Every dimension of a host's capacity is enforced by the scheduler (like Placement would).
 */
export interface HostCapacity {
  instances: number;
  vcpus: number;
  ram_mb: number;
  disk_gb: number;
}

export interface TopologyHost {
  /** the compute service host (`OS-EXT-SRV-ATTR:host`, `service.host`, what `ZONE:HOST` names) */
  name: string;
  /** the compute node (`hypervisor_hostname`); defaults to the host name */
  hypervisor_hostname?: string;
  capacity?: Partial<HostCapacity>;
}

export interface TopologyZone {
  name: string;
  hosts: TopologyHost[];
}

export interface Topology {
  zones: TopologyZone[];
}

/** What the fake driver of the reference cloud reports, used for every dimension a topology leaves out. */
export const DEFAULT_CAPACITY: HostCapacity = { instances: 100, vcpus: 1000, ram_mb: 800000, disk_gb: 600000 };

export const DEFAULT_TOPOLOGY: Topology = {
  zones: [
    { name: 'az1', hosts: [{ name: 'host-1' }, { name: 'host-2' }, { name: 'host-3' }] },
    {
      name: 'az2',
      hosts: [{ name: 'host-4' }, { name: 'host-5' }, { name: 'host-6', hypervisor_hostname: 'vsphere-drs-cluster-6' }],
    },
  ],
};

export class TopologyError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`invalid topology: ${field} ${problem}`);
    this.name = 'TopologyError';
  }
}

/** A host as the simulator uses it: every default filled in. */
export interface ResolvedHost {
  name: string;
  hypervisorHostname: string;
  zone: string;
  capacity: HostCapacity;
}

// Nova reserves this zone name for its control services.
const INTERNAL_ZONE = 'internal';
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const CAPACITY_KEYS = Object.keys(DEFAULT_CAPACITY) as (keyof HostCapacity)[];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function rejectUnknownKeys(value: Record<string, unknown>, allowed: string[], field: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new TopologyError(`${field}.${key}`, `is not a known field (allowed: ${allowed.join(', ')})`);
  }
}

function name(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new TopologyError(field, 'must be a string');
  // ':' would make ZONE:HOST ambiguous.
  if (!NAME_PATTERN.test(value)) {
    throw new TopologyError(field, `must be 1-255 characters of letters, digits, '.', '_' or '-' (no ':'), got '${value}'`);
  }
  return value;
}

/** Validates a parsed topology object; every error names the offending field. */
export function validateTopology(raw: unknown): Topology {
  if (!isRecord(raw)) throw new TopologyError('(root)', 'must be an object with a "zones" list');
  rejectUnknownKeys(raw, ['zones'], '(root)');
  if (!Array.isArray(raw.zones) || raw.zones.length === 0) throw new TopologyError('zones', 'must be a non-empty list');
  const zoneNames = new Set<string>();
  const hostNames = new Set<string>();
  const nodeNames = new Set<string>();
  const zones = raw.zones.map((z, zi): TopologyZone => {
    const zf = `zones[${zi}]`;
    if (!isRecord(z)) throw new TopologyError(zf, 'must be an object with "name" and "hosts"');
    rejectUnknownKeys(z, ['name', 'hosts'], zf);
    const zoneName = name(z.name, `${zf}.name`);
    if (zoneName === INTERNAL_ZONE) throw new TopologyError(`${zf}.name`, `'${INTERNAL_ZONE}' is reserved for Nova's control services`);
    if (zoneNames.has(zoneName)) throw new TopologyError(`${zf}.name`, `duplicates zone '${zoneName}'`);
    zoneNames.add(zoneName);
    if (!Array.isArray(z.hosts) || z.hosts.length === 0) throw new TopologyError(`${zf}.hosts`, 'must be a non-empty list');
    const hosts = z.hosts.map((h, hi): TopologyHost => {
      const hf = `${zf}.hosts[${hi}]`;
      if (!isRecord(h)) throw new TopologyError(hf, 'must be an object with a "name"');
      rejectUnknownKeys(h, ['name', 'hypervisor_hostname', 'capacity'], hf);
      const hostName = name(h.name, `${hf}.name`);
      if (hostNames.has(hostName)) throw new TopologyError(`${hf}.name`, `duplicates host '${hostName}' (a host belongs to one zone)`);
      hostNames.add(hostName);
      const host: TopologyHost = { name: hostName };
      if (h.hypervisor_hostname !== undefined) host.hypervisor_hostname = name(h.hypervisor_hostname, `${hf}.hypervisor_hostname`);
      const node = host.hypervisor_hostname ?? hostName;
      if (nodeNames.has(node)) throw new TopologyError(`${hf}.hypervisor_hostname`, `duplicates hypervisor '${node}'`);
      nodeNames.add(node);
      if (h.capacity !== undefined) {
        const cf = `${hf}.capacity`;
        if (!isRecord(h.capacity)) throw new TopologyError(cf, `must be an object with any of ${CAPACITY_KEYS.join(', ')}`);
        rejectUnknownKeys(h.capacity, CAPACITY_KEYS, cf);
        const capacity: Partial<HostCapacity> = {};
        for (const key of CAPACITY_KEYS) {
          const v = h.capacity[key];
          if (v === undefined) continue;
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
            throw new TopologyError(`${cf}.${key}`, `must be a whole number >= 0, got ${JSON.stringify(v)}`);
          }
          capacity[key] = v;
        }
        host.capacity = capacity;
      }
      return host;
    });
    return { name: zoneName, hosts };
  });
  return { zones };
}

/** Parses a topology file (JSON or YAML) and validates it. */
export function loadTopology(fileContent: string): Topology {
  let raw: unknown;
  try {
    // JSON is YAML, but JSON.parse gives the better message for a broken JSON file.
    raw = fileContent.trimStart().startsWith('{') ? JSON.parse(fileContent) : parseYaml(fileContent);
  } catch (e) {
    throw new TopologyError('(file)', `is neither valid JSON nor valid YAML: ${(e as Error).message}`);
  }
  return validateTopology(raw);
}

export function resolveHosts(topology: Topology): ResolvedHost[] {
  return topology.zones.flatMap((z) =>
    z.hosts.map((h) => ({
      name: h.name,
      hypervisorHostname: h.hypervisor_hostname ?? h.name,
      zone: z.name,
      capacity: { ...DEFAULT_CAPACITY, ...h.capacity },
    })),
  );
}
