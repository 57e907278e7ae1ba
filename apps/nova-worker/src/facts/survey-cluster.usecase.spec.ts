import { silentLogger } from '@trellis/common';
import { SCHEMA_VERSION, type WorkOrderMessage } from '@trellis/contracts';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import type { NovaAccess } from '../identity/nova-access';
import type { FactsRefresher } from './facts-refresher';
import { SurveyClusterUseCase } from './survey-cluster.usecase';

/**
 * What a survey reads again: the asking project's server groups and servers always; the cloud-wide
 * facts at once for a check or a repair, and for a scaling action only when they are older than the
 * refresh interval (FactsRefresher.refreshCloudWide); never another project's groups.
 */
describe('SurveyClusterUseCase: what it reads again, and as whom', () => {
  let db: Database;
  beforeAll(async () => (db = await openTestDatabase()));
  afterAll(async () => db?.close());

  const order = (action: string): WorkOrderMessage =>
    ({
      message_id: `m-${action}`,
      schema_version: SCHEMA_VERSION,
      action_id: '6f0e6a38-7a4c-4d8e-9a0c-3a1c6f1f0001',
      correlation_id: 'req-1',
      sent_at: new Date().toISOString(),
      cluster_id: null,
      project: 'p-a',
      user: 'u-a',
      action,
      kind: 'cloud',
      create_groups: [],
      create_servers: [],
      delete_servers: [],
      delete_groups: [],
    }) as unknown as WorkOrderMessage;

  it.each([
    ['CLUSTER_SCALE_OUT', 15_000],
    ['CLUSTER_SCALE_IN', 15_000],
    ['CLUSTER_RESIZE', 15_000],
    ['CLUSTER_CHECK', 0],
    ['CLUSTER_REPAIR', 0],
  ])('%s: the cloud-wide facts no older than %d ms, the groups of the asking project only', async (action, maxAge) => {
    const facts = { refreshCloudWide: jest.fn(async () => undefined), refreshProject: jest.fn(async () => undefined), hostOf: () => null };
    const nova = { listServers: jest.fn(async () => []) };
    const access = { asOwner: jest.fn(async () => nova) } as unknown as NovaAccess;
    const survey = new SurveyClusterUseCase(db.dataSource, access, facts as unknown as FactsRefresher, silentLogger, 15_000);

    await survey.execute(order(action));

    expect(facts.refreshCloudWide.mock.calls).toEqual([[maxAge]]);
    expect(facts.refreshProject.mock.calls).toEqual([[{ project: 'p-a', user: 'u-a' }, nova]]);
    expect(access.asOwner).toHaveBeenCalledWith({ project: 'p-a', user: 'u-a' });
  });

  it.each([
    ['CLUSTER_SCALE_OUT', ['whole', 'changes']],
    ['CLUSTER_CHECK', ['whole', 'whole']],
    ['CLUSTER_REPAIR', ['whole', 'whole']],
  ])("%s twice: the cluster's servers listed %j", async (action, lists) => {
    const facts = { refreshCloudWide: jest.fn(async () => undefined), refreshProject: jest.fn(async () => undefined), hostOf: () => null };
    const asked: string[] = [];
    const server = { id: 's-1', status: 'ACTIVE', host: null, hostId: 'h', availabilityZone: 'az1', updated: new Date().toISOString(), metadata: { trellis_cluster: '6f0e6a38-7a4c-4d8e-9a0c-3a1c6f1f0c01' } };
    const nova = {
      listServers: jest.fn(async (filter: { changesSince?: Date }) => {
        asked.push(filter.changesSince ? 'changes' : 'whole');
        return [server];
      }),
    };
    const access = { asOwner: jest.fn(async () => nova) } as unknown as NovaAccess;
    const survey = new SurveyClusterUseCase(db.dataSource, access, facts as unknown as FactsRefresher, silentLogger, 15_000);
    const clustered = { ...order(action), cluster_id: '6f0e6a38-7a4c-4d8e-9a0c-3a1c6f1f0c01' } as WorkOrderMessage;

    await survey.execute(clustered);
    await survey.execute({ ...clustered, message_id: 'm-again' } as WorkOrderMessage);

    expect(asked).toEqual(lists);
  });
});
