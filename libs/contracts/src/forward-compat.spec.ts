import type { ClassConstructor } from 'class-transformer';
import {
  ActionFinishedMessage,
  ActionRequestedMessage,
  SCHEMA_VERSION,
  WORK_ORDER_SCHEMA_VERSION,
  WorkOrderMessage,
  WorkResultMessage,
  acceptedSchemaVersions,
  serverProfile,
  workOrderAs,
} from './messages';
import { ContractViolation, parseContract } from './validate';

/**
 * Rolling upgrades (README "Upgrading a running deployment"): while replicas of two releases run
 * side by side, a consumer of the older release gets messages from producers of the newer one. A
 * release may add optional fields to a message within one schema_version; the older consumer must
 * take such a message as it took the message without them (every consumer parses with
 * parseContract). A change an older consumer cannot take (a field it requires removed, a new value
 * for a field it checks) needs a new schema_version, and the older consumer dead-letters those
 * messages with the reason, for `trellis replay` once it is upgraded.
 */

const envelope = {
  message_id: '0b7f0b8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  schema_version: SCHEMA_VERSION,
  action_id: '1c8e1c9f-2d3e-4f60-9bac-1d2e3f4a5b6c',
  correlation_id: 'req-upgrade',
  sent_at: '2026-11-27T12:00:00.000Z',
};
const clusterId = '2d9f2da0-3e4f-4071-8cbd-2e3f4a5b6c7d';
const nodeId = '3ea03eb1-4f50-4182-9dce-3f4a5b6c7d8e';

const samples: Array<[string, ClassConstructor<object>, Record<string, unknown>]> = [
  ['ActionRequestedMessage', ActionRequestedMessage, { ...envelope, cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', project: 'demo', cause: 'submitted' }],
  [
    'WorkOrderMessage',
    WorkOrderMessage,
    {
      ...envelope,
      schema_version: WORK_ORDER_SCHEMA_VERSION,
      cluster_id: clusterId,
      project: 'demo',
      user: 'demo-user',
      action: 'CLUSTER_SCALE_OUT',
      kind: 'create',
      create_groups: [{ ref: 'g1', name: 'web-anti', policy: 'anti-affinity' }],
      create_servers: [{ node_id: nodeId, name: 'node-web-1', index: 1, placement: { zone: 'az1', servergroup: 'g1' } }],
      profile: { flavor: 'm1.small', image: 'cirros', metadata: { tier: 'web' } },
      delete_servers: [{ node_id: nodeId, physical_id: 'srv-1', destroy: true }],
      delete_groups: [{ id: 'old-group' }],
      server_ops: [{ node_id: nodeId, physical_id: 'srv-1', op: 'reboot', params: {} }],
      build_timeout: 600,
    },
  ],
  [
    'WorkResultMessage',
    WorkResultMessage,
    {
      ...envelope,
      cluster_id: clusterId,
      outcome: 'SUCCEEDED',
      reason: 'ok',
      nodes: [{ node_id: nodeId, status: 'ACTIVE', physical_id: 'srv-1', zone: 'az1', host: 'host-1' }],
      groups: { g1: 'nova-group-1' },
    },
  ],
  [
    'ActionFinishedMessage',
    ActionFinishedMessage,
    { ...envelope, cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', status: 'SUCCEEDED', status_reason: 'Cluster scaling succeeded.', project: 'demo' },
  ],
];

/** The message as a newer release might send it: a field it added at the top and in every nested object. */
function withNewerFields(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => withNewerFields(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withNewerFields(v, depth + 1);
  out.added_by_a_newer_release = { depth, note: 'ignored by this release' };
  return out;
}

describe('a message from a newer release of the same schema_version', () => {
  it.each(samples)('%s: the sample is valid as it stands', (_name, cls, sample) => {
    expect(() => parseContract(cls, sample)).not.toThrow();
  });

  it.each(samples)('%s: fields added at any level are taken and the known ones read as before', (_name, cls, sample) => {
    const parsed = parseContract(cls, withNewerFields(sample)) as Record<string, unknown>;
    const plain = JSON.parse(JSON.stringify(parsed)) as Record<string, unknown>;
    // what this release reads is unchanged; the rest rides along
    expect(plain).toMatchObject(sample);
    expect(plain.added_by_a_newer_release).toEqual({ depth: 0, note: 'ignored by this release' });
  });

  it.each(samples)('%s: a newer schema_version is refused, naming the field (the consumer dead-letters it)', (_name, cls, sample) => {
    const newer = { ...sample, schema_version: Math.max(...acceptedSchemaVersions(cls)) + 1 };
    expect(() => parseContract(cls, newer)).toThrow(ContractViolation);
    expect(() => parseContract(cls, newer)).toThrow(/schema_version/);
  });
});

describe('work orders of two schema versions (WORK_ORDER_SCHEMA_VERSION)', () => {
  const [, , current] = samples.find(([name]) => name === 'WorkOrderMessage')!;
  const servers = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ node_id: `${nodeId.slice(0, -2)}${String(i).padStart(2, '0')}`, name: `node-web-${i}`, index: i, placement: { zone: 'az1' } }));

  it('takes version 1, written by engines of the release before, each server with its own profile', () => {
    const profile = { flavor: 'm1.small', image: 'cirros' };
    const v1 = { ...current, schema_version: 1, profile: undefined, create_servers: servers(2).map((c) => ({ ...c, profile })) };
    const order = parseContract(WorkOrderMessage, JSON.parse(JSON.stringify(v1)));
    expect(order.create_servers.map((c) => serverProfile(order, c))).toEqual([profile, profile]);
  });

  it('reads version 2\'s profile once for every server', () => {
    const order = parseContract(WorkOrderMessage, { ...current, create_servers: servers(3) });
    expect(order.create_servers.map((c) => serverProfile(order, c))).toEqual(Array(3).fill(current.profile));
  });

  it('refuses an order with a server to create and no profile for it, naming the field', () => {
    const { profile: _profile, ...without } = current;
    expect(() => parseContract(WorkOrderMessage, without)).toThrow(/\bprofile: profile must be an object/);
    expect(() => parseContract(WorkOrderMessage, { ...current, profile: 'cirros' })).toThrow(/\bprofile: profile must be an object/);
    // an order that creates nothing needs none (a scale-in, a survey)
    expect(() => parseContract(WorkOrderMessage, { ...without, kind: 'delete', create_servers: [] })).not.toThrow();
  });

  it('writes an order as version 1 for workers that take no newer one: the form engines of the release before wrote', () => {
    const profile = { flavor: 'm1.small', image: 'cirros', user_data: '#!/bin/sh' };
    const v2 = { ...current, profile, create_servers: servers(3) } as unknown as WorkOrderMessage;
    const v1 = workOrderAs(v2, 1);
    const { profile: _dropped, ...withoutProfile } = v2;
    expect(v1).toEqual({ ...withoutProfile, schema_version: 1, create_servers: servers(3).map((c) => ({ ...c, profile })) });
    expect('profile' in v1).toBe(false);
    // valid as version 1, and every server boots from the same properties as from version 2
    const parsed = parseContract(WorkOrderMessage, JSON.parse(JSON.stringify(v1)));
    expect(parsed.create_servers.map((c) => serverProfile(parsed, c))).toEqual(Array(3).fill(profile));
    // the order it was made from is untouched
    expect(v2.profile).toBe(profile);
    expect(v2.create_servers.every((c) => c.profile === undefined)).toBe(true);
  });

  it('leaves an order of this release as it is for workers that take it, and knows no other version', () => {
    const v2 = { ...current, create_servers: servers(2) } as unknown as WorkOrderMessage;
    expect(workOrderAs(v2, WORK_ORDER_SCHEMA_VERSION)).toBe(v2);
    // an order kept in version 1 (a step of an older engine's action) is sent on as it is, as version 2
    const kept = workOrderAs(v2, 1);
    const again = parseContract(WorkOrderMessage, JSON.parse(JSON.stringify(workOrderAs(kept, WORK_ORDER_SCHEMA_VERSION))));
    expect(again.schema_version).toBe(WORK_ORDER_SCHEMA_VERSION);
    expect(again.create_servers.map((c) => serverProfile(again, c))).toEqual(Array(2).fill(current.profile));
    expect(() => workOrderAs(v2, 0)).toThrow(/no schema_version 0/);
  });

  it('names the versions it takes when it refuses one', () => {
    expect(() => parseContract(WorkOrderMessage, { ...current, schema_version: 3 })).toThrow(/schema_version must be one of the following values: 1, 2/);
    expect(() => parseContract(ActionFinishedMessage, { ...samples[3][2], schema_version: WORK_ORDER_SCHEMA_VERSION })).toThrow(
      new RegExp(`schema_version must be one of the following values: ${SCHEMA_VERSION}$`),
    );
  });
});
