import { DecisionEntity, row } from '@trellis/persistence';
import { replayDecisions } from '../../cli/commands/replay-decisions';
import type { Embedded } from '../../cli/embedded';
import { act, createPolicy, demoApi, zoneSpec } from '../support/placement.scenario';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * `trellis replay --decisions`: every stored decision is re-evaluated from its snapshot with the
 * current code; the same code decides the same, and a decision that no longer matches is listed.
 */
describe('replay of stored decisions (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;

  beforeAll(async () => {
    t = await startTestTrellis({ env: { SIMULATOR_BUILD_DELAY_MS: '20' } });
    trellis = t.trellis;
  });
  afterAll(() => t?.close());

  it('finds no difference for decisions the current code made, and reports one that differs', async () => {
    const api = await demoApi(trellis);
    await createProfileAndCluster(api, 'audited');
    await createPolicy(api, 'audit-zones', zoneSpec);
    expect((await act(api, 'audited', { policy_attach: { policy_id: 'audit-zones' } })).status).toBe('SUCCEEDED');
    const out = await act(api, 'audited', { scale_out: { count: 3 } });
    expect(out.status).toBe('SUCCEEDED');
    const inn = await act(api, 'audited', { scale_in: { count: 1 } });
    expect(inn.status).toBe('SUCCEEDED');

    const dataSource = trellis.infra.database.dataSource;
    const clean = await replayDecisions(dataSource, trellis.registry, {});
    expect(clean.checked).toBeGreaterThanOrEqual(2);
    expect(clean.differing).toEqual([]);

    // a decision an older release made differently (here: another zone plan)
    const repo = dataSource.getRepository(DecisionEntity);
    const stored = await repo.findOneByOrFail({ action_id: out.id });
    const output = stored.output as { data: { creation: { zones: Record<string, number> } } };
    output.data.creation.zones = { az1: 3 };
    await repo.update({ action_id: out.id }, row<DecisionEntity>({ output }));
    const report = await replayDecisions(dataSource, trellis.registry, {});
    expect(report.differing.map((d) => d.action_id)).toEqual([out.id]);
    expect(report.differing[0].now).toMatchObject({ data: { creation: { zones: { az1: 1, az2: 2 } } } });
  });
});
