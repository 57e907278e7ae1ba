import type { WorkResultMessage } from '@trellis/contracts';
import { emptyPlan } from '@trellis/decisions';
import type { ActionEntity } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';
import { FailedScaleOutCleanup } from './failed-scale-out-cleanup';

/** A manager that fails the test if the cleanup reads or writes anything. */
const untouched = new Proxy({}, { get: (_, key) => { throw new Error(`the database was used (${String(key)})`); } }) as EntityManager;

const result = (outcome: 'SUCCEEDED' | 'FAILED') => ({ outcome, reason: 'No valid host was found.', nodes: [], groups: {} }) as unknown as WorkResultMessage;
const action = (name: string, clusterId: string | null = 'c1') => ({ id: 'a1', action: name, cluster_id: clusterId }) as ActionEntity;
const growing = () => ({ ...emptyPlan(), create_nodes: [{ node_id: 'n1', name: 'node-1', index: 1, placement: {} }] });

describe('FailedScaleOutCleanup.begin', () => {
  const cleanup = new FailedScaleOutCleanup({ buildTimeoutSeconds: 60, leaseSeconds: 30 });
  const now = new Date('2026-01-01T00:00:00Z');

  it('leaves alone what is not a failed scale-out into a cluster, without looking at the database', async () => {
    await expect(cleanup.begin(untouched, action('CLUSTER_SCALE_OUT'), growing(), result('SUCCEEDED'), {}, now)).resolves.toEqual({ kind: 'kept' });
    await expect(cleanup.begin(untouched, action('CLUSTER_SCALE_IN'), growing(), result('FAILED'), {}, now)).resolves.toEqual({ kind: 'kept' });
    await expect(cleanup.begin(untouched, action('CLUSTER_DELETE'), growing(), result('FAILED'), {}, now)).resolves.toEqual({ kind: 'kept' });
    await expect(cleanup.begin(untouched, action('NODE_CREATE', null), growing(), result('FAILED'), {}, now)).resolves.toEqual({ kind: 'kept' });
    // a resize that shrinks creates nothing
    await expect(cleanup.begin(untouched, action('CLUSTER_RESIZE'), emptyPlan(), result('FAILED'), {}, now)).resolves.toEqual({ kind: 'kept' });
  });
});
