import { NodeSnapshot } from '../framework/types';

/**
 * Every node's zone (as nodeZone reads it), read in one pass over the snapshot and shared by zone
 * placement, the deletion policy and the engine plan of one decision. Each of them used to read
 * every node's zone again; on a freshly loaded snapshot each such pass costs about 30 ns a node at
 * 10,000 nodes (the nodes do not fit in the cache, so every node is a cache miss), far more than the
 * arithmetic. The index keeps the zones as small integers, so the later steps never touch a node
 * they do not need.
 *
 * Scoped to one evaluate() call (see DecisionIndex), never cached on a snapshot object.
 */
export class ZoneIndex {
  private constructor(
    readonly nodes: readonly NodeSnapshot[],
    /** the distinct zones, in the order first met */
    private readonly names: string[],
    /** per node: its zone's position in `names`, -1 for a node without a zone */
    private readonly codes: Int32Array,
    /** per position in `names`: how many nodes are in that zone */
    private readonly sizes: number[],
  ) {}

  /**
   * Null when a node is null or undefined: reading its zone throws, and the callers then take the
   * plain per-node path so that the decision fails exactly as it always did.
   */
  static build(nodes: readonly NodeSnapshot[]): ZoneIndex | null {
    const codes = new Int32Array(nodes.length);
    const names: string[] = [];
    const sizes: number[] = [];
    // a scan over a few names is cheaper than hashing zone strings; a Map once there are many
    let byName: Map<string, number> | null = null;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      if (node === null || node === undefined) return null;
      // nodeZone, written out
      const data = node.data;
      const placement = data === null || data === undefined ? undefined : data.placement;
      let zone = placement === null || placement === undefined ? undefined : placement.zone;
      if (typeof zone !== 'string') {
        const server = node.server;
        zone = server === null || server === undefined ? undefined : server.availability_zone;
        if (typeof zone !== 'string') {
          codes[i] = -1;
          continue;
        }
      }
      let code = -1;
      if (byName) code = byName.get(zone) ?? -1;
      else {
        for (let j = 0; j < names.length; j++) {
          if (names[j] === zone) {
            code = j;
            break;
          }
        }
      }
      if (code < 0) {
        code = names.length;
        names.push(zone);
        sizes.push(0);
        if (byName) byName.set(zone, code);
        else if (names.length > 8) byName = new Map(names.map((z, j) => [z, j]));
      }
      codes[i] = code;
      sizes[code]++;
    }
    return new ZoneIndex(nodes, names, codes, sizes);
  }

  /** The zone of node `i` (nodeZone). */
  zoneOf(i: number): string | undefined {
    const code = this.codes[i];
    return code < 0 ? undefined : this.names[code];
  }

  private codeOf(zone: string): number {
    return this.names.indexOf(zone);
  }

  /**
   * zoneDistribution(nodes, usable): nodes per usable zone. Null for a list naming a zone twice,
   * where zoneDistribution's result depends on how it looks names up; the caller then asks it.
   */
  counts(usable: readonly string[]): Map<string, number> | null {
    if (!distinct(usable)) return null;
    const result = new Map<string, number>();
    for (const zone of usable) {
      const code = this.codeOf(zone);
      result.set(zone, code < 0 ? 0 : this.sizes[code]);
    }
    return result;
  }

  /**
   * nodesInZones(nodes, zones): the nodes of each zone, in cluster order, without reading a node.
   * Null for a list naming a zone twice (the caller then asks nodesInZones).
   */
  nodesIn(zones: readonly string[]): Map<string, NodeSnapshot[]> | null {
    if (!distinct(zones)) return null;
    const lists = zones.map((): NodeSnapshot[] => []);
    // a few zones: a plain array filled by a loop is cheaper to make than a typed array
    const target = new Array<number>(this.names.length);
    for (let c = 0; c < target.length; c++) target[c] = -1;
    let wanted = 0;
    for (let j = 0; j < zones.length; j++) {
      const code = this.codeOf(zones[j]);
      if (code >= 0) {
        target[code] = j;
        wanted += this.sizes[code];
      }
    }
    const { codes, nodes } = this;
    for (let i = 0; i < codes.length && wanted > 0; i++) {
      const code = codes[i];
      if (code >= 0 && target[code] >= 0) {
        lists[target[code]].push(nodes[i]);
        wanted--;
      }
    }
    const byZone = new Map<string, NodeSnapshot[]>();
    for (let j = 0; j < zones.length; j++) byZone.set(zones[j], lists[j]);
    return byZone;
  }
}

/** Whether no name is there twice: a handful of zone names are compared in pairs, not hashed. */
function distinct(names: readonly string[]): boolean {
  if (names.length > 16) return new Set(names).size === names.length;
  for (let i = 1; i < names.length; i++) {
    for (let j = 0; j < i; j++) if (names[i] === names[j]) return false;
  }
  return true;
}

/**
 * The zone index of one decision, built on first use. `get()` gives null when the index cannot
 * stand in for per-node reads (see ZoneIndex.build); it is then never built again.
 */
export class DecisionIndex {
  // set at construction, filled on first use: one shape for every instance (see Policy.typeMeta)
  private built: ZoneIndex | null | undefined = undefined;

  constructor(readonly nodes: readonly NodeSnapshot[]) {}

  get(): ZoneIndex | null {
    if (this.built === undefined) this.built = ZoneIndex.build(this.nodes);
    return this.built;
  }
}

/** The decision's index when it was built for these very nodes and can stand in for reading them. */
export function zoneIndexFor(decision: DecisionIndex | undefined, nodes: readonly NodeSnapshot[]): ZoneIndex | null {
  const index = decision?.get() ?? null;
  return index !== null && index.nodes === nodes ? index : null;
}
