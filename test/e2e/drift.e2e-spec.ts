import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@trellis/common';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { RoleAntiAffinityPolicy } from '../../plugins/role-anti-affinity';
import { PLACEMENT_TOPOLOGY } from '../support/placement.scenario';
import { sharedHostCheckedAndRepaired, vanishedGroupFailsScaleOut, vanishedGroupRepairedBeforeScaleOut } from '../support/drift.scenario';

describe('role anti-affinity drift detected and repaired (embedded default)', () => {
  let trellis: Embedded;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-topology-'));
    writeFileSync(join(dir, 'topology.json'), JSON.stringify(PLACEMENT_TOPOLOGY));
    trellis = await startEmbedded(
      loadConfig({
        TRELLIS_PORT: '0',
        SIMULATOR_PORT: '0',
        TRELLIS_DATA_DIR: ':memory:',
        SIMULATOR_BUILD_DELAY_MS: '50',
        SIMULATOR_TOPOLOGY_FILE: join(dir, 'topology.json'),
        TRELLIS_POLL_INTERVAL_MS: '50',
        LOG_LEVEL: 'error',
      }),
      undefined,
      { policies: [RoleAntiAffinityPolicy] },
    );
  });
  afterAll(() => trellis?.close());

  it('a vanished group is created again and every role node moved into it before a scale-out grows', () =>
    vanishedGroupRepairedBeforeScaleOut(trellis));

  it("with drift.on_scale 'fail' the scale-out fails with the reason and changes nothing", () => vanishedGroupFailsScaleOut(trellis));

  it('two members on one host: check reports it, repair (after its dry run) fixes it', () => sharedHostCheckedAndRepaired(trellis));
});
