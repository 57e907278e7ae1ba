import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@trellis/common';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { PLACEMENT_TOPOLOGY, antiAffinityWithZones, drsPlacement } from '../support/placement.scenario';

describe('placement policies that really place (embedded default)', () => {
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
    );
  });
  afterAll(() => trellis?.close());

  it('anti-affinity + zones 100/200: 6 servers as 2 + 4 on 6 hosts, scale-in keeps the weights, NoValidHost fails', () =>
    antiAffinityWithZones(trellis));

  it('DRS: servers land on the vSphere DRS host', () => drsPlacement(trellis));
});
