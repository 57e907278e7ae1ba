import { barLine, countsText, progressOf, quietLine, resultLine, watchAction, type WatchState } from './action-watch';
import type { TrellisApi } from './trellis-api';

const decision = {
  plan: {
    create_nodes: [{ node_id: 'n1' }, { node_id: 'n2' }, { node_id: 'n3' }, { node_id: 'n4' }],
    delete_nodes: [{ node_id: 'old' }],
  },
};
const action = { id: 'a1', action: 'CLUSTER_SCALE_OUT', status: 'RUNNING', status_reason: 'Scaling', cluster_id: 'c1' };

describe('trellis watch: counting the planned nodes', () => {
  it("counts the decision's new nodes by status, and the removed ones that are gone", () => {
    const nodes = [
      { id: 'n1', status: 'ACTIVE' },
      { id: 'n2', status: 'ERROR' },
      { id: 'n3', status: 'CREATING' },
      { id: 'other', status: 'ACTIVE' },
    ];
    expect(progressOf(decision, nodes)).toEqual({ create: 4, active: 1, error: 1, delete: 1, deleted: 1, decided: true });
    expect(progressOf(decision, [...nodes, { id: 'old', status: 'DELETING' }])).toMatchObject({ deleted: 0 });
  });

  it("counts a repair's replacements as created and removed", () => {
    const repair = { plan: { repair: { replacements: [{ node_id: 'new', old_node_id: 'old' }] } } };
    expect(progressOf(repair, [{ id: 'new', status: 'ACTIVE' }])).toEqual({ create: 1, active: 1, error: 0, delete: 1, deleted: 1, decided: true });
  });

  it('says when nothing is decided yet, and when an action ended without a decision', () => {
    const none = progressOf(null, []);
    expect(countsText(none, false)).toBe('waiting for the policy engine');
    expect(countsText(none, true)).toBe('no decision (no policy chain ran)');
    expect(countsText(progressOf({ plan: {} }, []), false)).toBe('no nodes to create or remove');
  });
});

describe('trellis watch: rendering', () => {
  const state = (status: string, statuses: string[]): WatchState => ({
    action: { ...action, status },
    progress: progressOf({ plan: { create_nodes: statuses.map((_, i) => ({ node_id: `n${i}` })) } }, statuses.map((s, i) => ({ id: `n${i}`, status: s }))),
  });

  it('draws a bar of the nodes that reached ACTIVE or ERROR among those planned', () => {
    expect(barLine(state('RUNNING', ['ACTIVE', 'CREATING', 'CREATING', 'CREATING']), 8)).toBe('CLUSTER_SCALE_OUT [##......] 1/4 ACTIVE, 0 ERROR  RUNNING');
    expect(barLine(state('FAILED', ['ACTIVE', 'ERROR']), 8)).toBe('CLUSTER_SCALE_OUT [########] 1/2 ACTIVE, 1 ERROR  FAILED');
    expect(barLine({ action, progress: progressOf(null, []) }, 4)).toBe('CLUSTER_SCALE_OUT [....] waiting for the policy engine  RUNNING');
  });

  it('writes a quiet line with the status and the counts, and the result line', () => {
    expect(quietLine(state('RUNNING', ['ACTIVE', 'CREATING']))).toBe('RUNNING CLUSTER_SCALE_OUT: 1/2 ACTIVE, 0 ERROR');
    expect(resultLine({ ...action, status: 'SUCCEEDED', status_reason: 'Cluster scaling succeeded.' })).toBe('SUCCEEDED: Cluster scaling succeeded.');
    expect(resultLine({ ...action, status: 'FAILED', status_reason: null })).toBe('FAILED:');
  });
});

describe('trellis watch: following', () => {
  /** an API whose action goes READY → RUNNING (decided) → nodes ACTIVE one by one → SUCCEEDED */
  function scriptedApi() {
    const steps = [
      { status: 'READY', decided: false, nodes: [] as string[] },
      { status: 'RUNNING', decided: true, nodes: ['CREATING', 'CREATING'] },
      { status: 'RUNNING', decided: true, nodes: ['CREATING', 'CREATING'] },
      { status: 'RUNNING', decided: true, nodes: ['ACTIVE', 'CREATING'] },
      { status: 'SUCCEEDED', decided: true, nodes: ['ACTIVE', 'ACTIVE'] },
    ];
    let i = -1;
    const call = async (_method: string, path: string) => {
      if (path.startsWith('/actions/a1/decision')) {
        return steps[i].decided ? { status: 200, body: { decision: { plan: { create_nodes: [{ node_id: 'n0' }, { node_id: 'n1' }] } } }, location: null } : { status: 404, body: null, location: null };
      }
      if (path.startsWith('/actions/')) {
        i = Math.min(i + 1, steps.length - 1);
        return { status: 200, body: { action: { ...action, status: steps[i].status, status_reason: steps[i].status === 'SUCCEEDED' ? 'Cluster scaling succeeded.' : null } }, location: null };
      }
      return { status: 200, body: { nodes: steps[i].nodes.map((status, n) => ({ id: `n${n}`, status })) }, location: null };
    };
    return { call } as unknown as TrellisApi;
  }

  it('writes one line per change when the output is not a terminal, then the result', async () => {
    let out = '';
    const final = await watchAction(scriptedApi(), 'a1', { out: { write: (t: string) => (out += t) }, sleep: async () => undefined });
    expect(final.status).toBe('SUCCEEDED');
    expect(out.split('\n')).toEqual([
      'READY CLUSTER_SCALE_OUT: waiting for the policy engine',
      'RUNNING CLUSTER_SCALE_OUT: 0/2 ACTIVE, 0 ERROR',
      'RUNNING CLUSTER_SCALE_OUT: 1/2 ACTIVE, 0 ERROR',
      'SUCCEEDED CLUSTER_SCALE_OUT: 2/2 ACTIVE, 0 ERROR',
      'SUCCEEDED: Cluster scaling succeeded.',
      '',
    ]);
  });

  it('redraws one line on a terminal and ends it before the result', async () => {
    let out = '';
    await watchAction(scriptedApi(), 'a1', { out: { write: (t: string) => (out += t), isTTY: true }, sleep: async () => undefined });
    const draws = out.split('\r\x1b[2K').filter(Boolean);
    expect(draws).toHaveLength(5);
    expect(draws[0]).toBe('CLUSTER_SCALE_OUT [........................] waiting for the policy engine  READY');
    expect(draws[4]).toBe('CLUSTER_SCALE_OUT [########################] 2/2 ACTIVE, 0 ERROR  SUCCEEDED\nSUCCEEDED: Cluster scaling succeeded.\n');
  });
});
