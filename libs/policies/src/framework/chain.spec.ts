import { Schema } from '../schema/schema';
import { ChainBinding, runChain } from './chain';
import { InMemoryCloud } from './cloud';
import { HookContext, Policy, PolicyType } from './policy';
import { PolicyRegistry } from './registry';
import { ClusterSnapshot, PolicyAction } from './types';

type Behaviour = (ctx: HookContext) => string | void;
const behaviours = new Map<string, Behaviour>();

@PolicyType({
  name: 'test.policy.probe',
  versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2024.01' }] },
  profileTypes: ['ANY'],
  targets: [['BEFORE', 'CLUSTER_SCALE_OUT']],
  priority: 300,
  hooks: ['pre_op'],
  properties: { key: Schema.String({ required: true }) },
})
class ProbePolicy extends Policy<{ key: string }> {
  override preOp(ctx: HookContext): string | void {
    return behaviours.get(this.properties.key)?.(ctx);
  }
}

const registry = new PolicyRegistry().register(ProbePolicy as never);
const cluster: ClusterSnapshot = { id: 'c', name: 'c', min_size: 0, max_size: -1, desired_capacity: 0, profile: { type: 'x', spec: {} }, nodes: [] };

function binding(key: string, id: string, opts: { priority?: number; attached_at?: string | null; enabled?: boolean } = {}): ChainBinding {
  const policy = registry.create({ type: 'test.policy.probe', version: '1.0', properties: { key } }, { id: `p-${key}`, name: key });
  return { policy, priority: opts.priority, binding: { id, enabled: opts.enabled ?? true, attached_at: opts.attached_at ?? null, data: null, last_op: `last-${key}` } };
}

function run(bindings: ChainBinding[], data: Record<string, unknown> = {}) {
  const action: PolicyAction = { action: 'CLUSTER_SCALE_OUT', target: 'c', inputs: {}, data };
  const result = runChain(bindings, 'BEFORE', action, { cluster, cloud: new InMemoryCloud({}, () => 'id'), random: Math.random, now: 0, maxNodesPerCluster: 1000 });
  return { ...result, action };
}

describe('runChain', () => {
  const order: string[] = [];
  beforeEach(() => {
    order.length = 0;
    for (const key of ['a', 'b', 'c', 'd']) behaviours.set(key, () => void order.push(key));
  });

  it('runs by priority, then attached_at, then binding id (decision 16)', () => {
    run([
      binding('a', 'b-3', { attached_at: '2024-01-02T00:00:00Z' }),
      binding('b', 'b-9', { attached_at: '2024-01-01T00:00:00Z' }),
      binding('c', 'b-1', { attached_at: '2024-01-02T00:00:00Z' }),
      binding('d', 'b-5', { priority: 100 }),
    ]);
    expect(order).toEqual(['d', 'b', 'c', 'a']);
  });

  it('resets status/reason, ends OK, and sets inputs.last_op to the last visited binding', () => {
    const { status, reason, action } = run([binding('a', '1'), binding('b', '2')], { status: 'ERROR', reason: 'stale' });
    expect([status, reason]).toEqual(['OK', 'Completed policy checking.']);
    expect(action.data).toEqual({ status: 'OK', reason: 'Completed policy checking.' });
    expect(action.inputs.last_op).toBe('last-b');
  });

  it('stops at the first error, prefixes the reason and traces the rest as skipped', () => {
    behaviours.set('b', (ctx) => {
      ctx.action.data.status = 'ERROR';
      ctx.action.data.reason = 'no room';
    });
    const { status, reason, trace } = run([binding('a', '1'), binding('b', '2'), binding('c', '3'), binding('d', '4', { enabled: false })]);
    expect(status).toBe('ERROR');
    expect(reason).toBe("Failed policy 'b': no room");
    expect(order).toEqual(['a']);
    expect(trace.map((t) => [t.binding_id, t.verdict, t.reason])).toEqual([
      ['1', 'OK', 'no change'],
      ['2', 'ERROR', 'no room'],
      ['3', 'SKIPPED', 'an earlier policy failed'],
      ['4', 'SKIPPED', 'binding disabled'],
    ]);
    expect(trace[1]).toMatchObject({ ran: true, changed_keys: ['status', 'reason'], policy_type: 'test.policy.probe-1.0', priority: 300 });
  });

  it('turns a throwing hook into a chain failure', () => {
    behaviours.set('a', () => {
      throw new Error('boom');
    });
    expect(run([binding('a', '1')]).reason).toBe("Failed policy 'a': boom");
  });

  it('reports changed keys: replaced, added, removed, and nested objects mutated in place', () => {
    behaviours.set('a', (ctx) => {
      const d = ctx.action.data;
      d.creation = { ...(d.creation as object), count: 2 };
      d.added = 1;
      delete d.gone;
      (d.placement as Record<string, unknown>).count = 9;
      return 'note';
    });
    const { trace } = run([binding('a', '1')], { creation: { count: 1 }, gone: true, placement: { count: 1 }, same: { x: 1 } });
    expect(trace[0].changed_keys.sort()).toEqual(['added', 'creation', 'gone', 'placement']);
    expect(trace[0].reason).toBe('note');
  });

  it('reports changed keys in order when a hook moves, removes and re-adds keys (kept keys found by position or not)', () => {
    behaviours.set('a', (ctx) => {
      const d = ctx.action.data;
      // moved to the end with the same value: not a change
      const kept = d.kept;
      delete d.kept;
      d.kept = kept;
      // removed and re-added with another value: a change, at its new position
      delete d.first;
      d.first = 2;
      d.added = true;
      delete d.gone;
    });
    const { trace } = run([binding('a', '1')], { first: 1, kept: { x: 1 }, gone: 0, last: 'z' });
    // the old keys in their old order (status and reason, set by the chain, are after 'last'), then the new
    expect(trace[0].changed_keys).toEqual(['first', 'gone', 'added']);
  });
});
