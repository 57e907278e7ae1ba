import type { Embedded } from '../../cli/embedded';
import { PLACEMENT_TOPOLOGY } from '../support/placement.scenario';
import { movedServerSeenByNextScaleOut, sharedHostCheckedAndRepaired, vanishedGroupFailsScaleOut, vanishedGroupRepairedBeforeScaleOut } from '../support/drift.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

describe('role anti-affinity drift detected and repaired (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;

  beforeAll(async () => {
    t = await startTestTrellis({ topology: PLACEMENT_TOPOLOGY });
    trellis = t.trellis;
  });
  afterAll(() => t?.close());

  it('a vanished group is created again and every role node moved into it before a scale-out grows', () =>
    vanishedGroupRepairedBeforeScaleOut(trellis));

  it("with drift.on_scale 'fail' the scale-out fails with the reason and changes nothing", () => vanishedGroupFailsScaleOut(trellis));

  it('two members on one host: check reports it, repair (after its dry run) fixes it', () => sharedHostCheckedAndRepaired(trellis));

  it("a member moved between two scale-outs: the second one's survey sees it from Nova's changes", () => movedServerSeenByNextScaleOut(trellis));
});
