import type { Embedded } from '../../cli/embedded';
import { PLACEMENT_TOPOLOGY, antiAffinityWithZones, drsPlacement } from '../support/placement.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/** The placement scenarios of issue 4 on RabbitMQ + PostgreSQL (same handlers, other adapters). */
describe('placement policies that really place (RabbitMQ + PostgreSQL)', () => {
  let t: TestTrellis;
  let trellis: Embedded;

  beforeAll(async () => {
    t = await startTestTrellis({ stack: 'rabbitmq+postgres', topology: PLACEMENT_TOPOLOGY });
    trellis = t.trellis;
  });
  afterAll(() => t?.close());

  it('anti-affinity + zones 100/200: 2 + 4 on 6 hosts, scale-in keeps the weights, NoValidHost fails', () =>
    antiAffinityWithZones(trellis));

  it("DRS: the cloud admin's servers land on the vSphere DRS host; a member's forced host is refused by Nova", () => drsPlacement(trellis));
});
