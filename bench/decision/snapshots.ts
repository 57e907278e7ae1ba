import { createHash } from 'crypto';
import type { EvaluationInput, EvaluationPolicyInput } from '@trellis/policies';

/** Which policies are attached to the cluster. */
export type ChainKind = 'zone' | 'full';
export type OperationKind = 'out-1' | 'out-10pct' | 'in-1' | 'in-10pct';

export interface Scenario {
  nodes: number;
  chain: ChainKind;
  op: OperationKind;
}

export const CHAIN_LABELS: Record<ChainKind, string> = {
  zone: 'zone placement alone',
  full: 'full chain',
};

export const OPERATION_LABELS: Record<OperationKind, string> = {
  'out-1': 'scale-out by 1',
  'out-10pct': 'scale-out by 10%',
  'in-1': 'scale-in by 1',
  'in-10pct': 'scale-in by 10%',
};

export const ZONES = [
  { name: 'az1', weight: 100 },
  { name: 'az2', weight: 100 },
  { name: 'az3', weight: 50 },
];

/** Nodes the operation adds or removes: 10 % of the cluster is Senlin's truncation, at least 1. */
export function operationCount(s: Scenario): number {
  return s.op.endsWith('-1') ? 1 : Math.max(1, Math.trunc((10 * s.nodes) / 100));
}

export function isScaleOut(op: OperationKind): boolean {
  return op.startsWith('out');
}

/** Mulberry32: the cluster a scenario builds is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuid(random: () => number): string {
  const hex = '0123456789abcdef';
  let s = '';
  for (let i = 0; i < 32; i++) s += hex[i === 12 ? 4 : i === 16 ? 8 + Math.floor(random() * 4) : Math.floor(random() * 16)];
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

const DAY = 86_400_000;
const CLUSTER_BORN = Date.UTC(2023, 0, 10, 8, 0, 0);
const NOW = '2025-06-01T12:00:00.000Z';

/**
 * A pre_op snapshot shaped as the policy engine's loader writes it (apps/policy-engine
 * load-snapshot.ts): nodes in index order with `created_at` from toISOString (so with milliseconds),
 * `data.placement` and the reported `server` zone, policies with their bindings, Nova's zone and
 * hypervisor lists. Every node is ACTIVE: error nodes are picked as victims before any time is read,
 * so a healthy cluster is the expensive case for victim selection.
 *
 * Zones are filled close to their weights but not exactly, so zone placement has a real plan to make.
 * Creation times grow with the index with jitter of a few hours, as nodes made by successive scale
 * actions are; the profile was created before the cluster.
 */
export function buildSnapshot(s: Scenario): EvaluationInput {
  const random = rng(0x7e11 + s.nodes);
  const clusterId = uuid(random);
  const groupId = uuid(random);
  const profileCreated = new Date(CLUSTER_BORN - 3 * DAY + 123).toISOString();
  const spread = Math.max(1, 500 * DAY) / Math.max(1, s.nodes);
  const totalWeight = ZONES.reduce((t, z) => t + z.weight, 0);
  const nodes = Array.from({ length: s.nodes }, (_, i) => {
    let r = random() * totalWeight;
    let zone = ZONES[ZONES.length - 1].name;
    for (const z of ZONES) {
      if (r < z.weight) {
        zone = z.name;
        break;
      }
      r -= z.weight;
    }
    const created = CLUSTER_BORN + i * spread + Math.floor((random() - 0.5) * 6 * 3_600_000);
    return {
      id: uuid(random),
      name: `node-${uuid(random).slice(0, 8)}`,
      index: i + 1,
      status: 'ACTIVE',
      created_at: new Date(created).toISOString(),
      profile_created_at: profileCreated,
      tainted: false,
      data: { placement: { zone, servergroup: groupId } },
      physical_id: uuid(random),
      server: { availability_zone: zone, host: `compute-${String(Math.floor(random() * 64)).padStart(2, '0')}` },
    };
  });

  const count = operationCount(s);
  const out = isScaleOut(s.op);
  const percent = s.op.endsWith('10pct');
  const attachedAt = (minutes: number) => new Date(CLUSTER_BORN + minutes * 60_000).toISOString();
  const policy = (name: string, spec: Record<string, unknown>, minutes: number, extra: Partial<EvaluationPolicyInput> = {}) => ({
    id: uuid(random),
    name,
    type: `${spec.type as string}-${spec.version as string}`,
    spec,
    // the engine's loader reads a digest of each stored spec with it (SHA-256 of the jsonb's text);
    // here of the spec's JSON text: to evaluate() it is an opaque string either way
    spec_digest: createHash('sha256').update(JSON.stringify(spec)).digest('hex'),
    enabled: true,
    binding_id: uuid(random),
    attached_at: attachedAt(minutes),
    binding_data: {},
    last_op: null,
    ...extra,
  });
  const adjustment = percent
    ? { type: 'CHANGE_IN_PERCENTAGE', number: 10, min_step: 1, best_effort: false, cooldown: 300 }
    : { type: 'CHANGE_IN_CAPACITY', number: 1, min_step: 1, best_effort: false, cooldown: 300 };
  const zonePolicy = policy('web-zones', { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: ZONES } }, 1);
  const policies =
    s.chain === 'zone'
      ? [zonePolicy]
      : [
          policy('scale-out', { type: 'senlin.policy.scaling', version: '1.0', properties: { event: 'CLUSTER_SCALE_OUT', adjustment } }, 2, {
            last_op: '2025-05-31T23:10:00.000Z',
          }),
          policy('scale-in', { type: 'senlin.policy.scaling', version: '1.0', properties: { event: 'CLUSTER_SCALE_IN', adjustment } }, 3, {
            last_op: '2025-05-30T04:00:00.000Z',
          }),
          zonePolicy,
          policy(
            'web-anti-affinity',
            { type: 'senlin.policy.affinity', version: '1.0', properties: { servergroup: { name: 'web', policies: 'anti-affinity' } } },
            4,
            { binding_data: { AffinityPolicy: { version: '1.0', data: { inherited_group: false, servergroup_id: groupId } } } },
          ),
          policy(
            'oldest-first',
            {
              type: 'senlin.policy.deletion',
              version: '1.1',
              properties: { criteria: 'OLDEST_FIRST', destroy_after_deletion: true, grace_period: 30, reduce_desired_capacity: true },
            },
            5,
          ),
        ];

  return {
    hook: 'pre_op',
    policies,
    cluster: {
      id: clusterId,
      name: `web-${s.nodes}`,
      min_size: 0,
      max_size: -1,
      desired_capacity: s.nodes,
      profile: {
        type: 'os.nova.server-1.0',
        spec: {
          type: 'os.nova.server',
          version: '1.0',
          properties: { name: 'web', flavor: 'm1.small', image: 'cirros-0.6.2', networks: [{ network: 'private' }], key_name: 'ops' },
        },
      },
      nodes,
    },
    cloud: {
      availability_zones: [
        { zoneName: 'internal', zoneState: { available: true } },
        ...ZONES.map((z) => ({ zoneName: z.name, zoneState: { available: true } })),
        { zoneName: 'az4', zoneState: { available: false } },
      ],
      hypervisors: Array.from({ length: 64 }, (_, h) => ({
        id: h + 1,
        hypervisor_hostname: `compute-${String(h).padStart(2, '0')}.example.org`,
        service: { host: `compute-${String(h).padStart(2, '0')}` },
      })),
      server_groups: [{ id: groupId, name: 'web', policy: 'anti-affinity', rules: {}, members: nodes.slice(0, 50).map((n) => n.physical_id) }],
    },
    action: {
      action: out ? 'CLUSTER_SCALE_OUT' : 'CLUSTER_SCALE_IN',
      target: clusterId,
      // The full chain gets its count from the scaling policy, as a webhook-triggered scale does; zone
      // placement alone needs the count in the request.
      inputs: s.chain === 'zone' ? { count } : {},
      data: {},
    },
    now: NOW,
    seed: (s.nodes * 7919) >>> 0,
  };
}
