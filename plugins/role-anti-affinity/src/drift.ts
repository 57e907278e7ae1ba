import { ServerGroupFact } from '@trellis/policies';
import { readBindingData } from './binding-data';

export type DriftKind = 'group_missing' | 'member_outside_group' | 'hosts_shared';

export interface DriftFinding {
  kind: DriftKind;
  group_id: string;
  /** the nodes concerned, in cluster order */
  node_ids: string[];
  /** hosts_shared only */
  host?: string;
  message: string;
}

/** A cluster node as the engine's snapshot carries it. */
export interface DriftNode {
  id: string;
  name?: string;
  /** the Nova server id (server group members are server ids) */
  physical_id?: string | null;
  data?: { placement?: { servergroup?: string | null; [key: string]: unknown } | null; [key: string]: unknown } | null;
  server?: { id?: string | null; host?: string | null; [key: string]: unknown } | null;
}

export interface DriftSnapshot {
  /** the cluster-policy binding's data, as attach returned it */
  binding_data: Record<string, unknown> | null;
  nodes: readonly DriftNode[];
  /** Nova's server groups (cloud_facts `server_groups`) */
  server_groups: readonly ServerGroupFact[];
}

/** A snapshot detectDrift cannot read; `path` names the field. */
export class DriftInputError extends Error {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = 'DriftInputError';
  }
}

/**
 * Where the cloud no longer matches what the policy decided (pure; for the engine to report or
 * repair). A node counts as anti-affine when its recorded `data.placement.servergroup` is one of the
 * policy's groups: that is where it was placed, and Nova never moves a server between groups even if
 * the node's roles change later. Findings follow the binding's group order, then the cluster's node order.
 */
export function detectDrift(snapshot: DriftSnapshot): DriftFinding[] {
  if (snapshot === null || typeof snapshot !== 'object') throw new DriftInputError('snapshot', 'must be an object');
  const bound = readBindingData(snapshot.binding_data);
  if (typeof bound === 'string') throw new DriftInputError('binding_data', bound);
  if (!Array.isArray(snapshot.nodes)) throw new DriftInputError('nodes', 'must be a list');
  if (!Array.isArray(snapshot.server_groups)) throw new DriftInputError('server_groups', 'must be a list');
  snapshot.nodes.forEach((n, i) => {
    if (!n || typeof n !== 'object' || typeof n.id !== 'string' || !n.id) throw new DriftInputError(`nodes[${i}].id`, 'must be a non-empty string');
  });

  const findings: DriftFinding[] = [];
  const hard = bound.policy === 'anti-affinity';
  for (const group of bound.groups) {
    const label = group.name ? `'${group.name}' (${group.id})` : `'${group.id}'`;
    const nodes = snapshot.nodes.filter((n) => n.data?.placement?.servergroup === group.id);
    const fact = snapshot.server_groups.find((g) => g && g.id === group.id);
    if (!fact) {
      findings.push({
        kind: 'group_missing',
        group_id: group.id,
        node_ids: nodes.map((n) => n.id),
        message: `The server group ${label} no longer exists in Nova; ${nodes.length} node(s) were placed in it.`,
      });
      continue;
    }
    const members = new Set(Array.isArray(fact.members) ? fact.members : []);
    for (const node of nodes) {
      const server = node.physical_id ?? node.server?.id ?? null;
      // A server still being built has no id yet: nothing to compare.
      if (!server || members.has(server)) continue;
      findings.push({
        kind: 'member_outside_group',
        group_id: group.id,
        node_ids: [node.id],
        message: `Node ${nodeLabel(node)} was placed in the server group ${label}, but its server ${server} is not a member of it.`,
      });
    }
    // Soft anti-affinity lets Nova share a host when it must; only the hard policy promises otherwise.
    if (!hard) continue;
    const byHost = new Map<string, DriftNode[]>();
    for (const node of nodes) {
      const host = node.server?.host;
      if (typeof host !== 'string' || !host) continue;
      const list = byHost.get(host);
      if (list) list.push(node);
      else byHost.set(host, [node]);
    }
    for (const [host, shared] of byHost) {
      if (shared.length < 2) continue;
      findings.push({
        kind: 'hosts_shared',
        group_id: group.id,
        node_ids: shared.map((n) => n.id),
        host,
        message: `Nodes ${shared.map(nodeLabel).join(', ')} of the anti-affinity server group ${label} share the host '${host}'.`,
      });
    }
  }
  return findings;
}

function nodeLabel(node: DriftNode): string {
  return node.name ? `'${node.name}' (${node.id})` : `'${node.id}'`;
}
