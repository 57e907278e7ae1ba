import type { RepairPlan } from '@trellis/decisions';
import { stepsOf } from './repair-state';

const plan = (groups: number, replacements: number): RepairPlan =>
  ({
    scope: 'all',
    findings: [],
    groups: Array.from({ length: groups }, (_, i) => ({ ref: `ref:g${i}`, name: `g${i}`, policy: 'anti-affinity', replaces: `old${i}`, binding_id: 'b' })),
    binding_updates: [],
    replacements: Array.from({ length: replacements }, (_, i) => ({ old_node_id: `o${i}`, old_name: `o${i}`, old_physical_id: null, node_id: `n${i}`, name: `n${i}`, placement: {}, reasons: [] })),
    left: [],
  }) as RepairPlan;

describe('stepsOf', () => {
  it('replaces one node at a time: create, then delete, in plan order', () => {
    expect(stepsOf(plan(1, 2))).toEqual([
      { kind: 'create', replacement: 0 },
      { kind: 'delete', replacement: 0 },
      { kind: 'create', replacement: 1 },
      { kind: 'delete', replacement: 1 },
    ]);
  });

  it('still creates a vanished group that had no node in it', () => {
    expect(stepsOf(plan(1, 0))).toEqual([{ kind: 'groups' }]);
  });

  it('has nothing to do for an empty plan', () => {
    expect(stepsOf(plan(0, 0))).toEqual([]);
  });
});
