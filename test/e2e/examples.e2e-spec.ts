import { resolve } from 'node:path';
import { formatReport, listExamples, runExample } from '../../cli/commands/example-runner';
import { keystoneToken } from '../support/api-client';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

// The walkthroughs of examples/ (`trellis example NAME`), run against the embedded default exactly
// as a newcomer runs them: the spec files as written, the bundled policy types, the default topology
// (two zones of three hosts). Each checks where its servers landed.
const ROOT = resolve(__dirname, '../..');

describe('examples/ run as shown against the embedded default', () => {
  let t: TestTrellis;
  let token: string;
  beforeAll(async () => {
    t = await startTestTrellis();
    token = await keystoneToken(t.trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
  }, 60_000);
  afterAll(() => t?.close());

  it('has the three walkthroughs', () => {
    expect(listExamples(ROOT)).toEqual(['affinity', 'role-anti-affinity', 'zone-placement']);
  });

  it('lists role anti-affinity among the policy types without any configuration', async () => {
    const res = await fetch(`${t.trellis.url}/v1/policy-types`, { headers: { 'X-Auth-Token': token, 'OpenStack-API-Version': 'clustering 1.5' } });
    const names = ((await res.json()) as { policy_types: Array<{ name: string }> }).policy_types.map((p) => p.name);
    expect(names).toContain('trellis.policy.role_anti_affinity');
  });

  it.each(['affinity', 'zone-placement', 'role-anti-affinity'])('%s: the servers land as the example says, and it cleans up after itself', async (name) => {
    const report = await runExample(ROOT, name, { apiUrl: t.trellis.url, token });
    expect(report.failures).toEqual([]);
    expect(formatReport(report)).toContain('as expected');
    const clusters = await fetch(`${t.trellis.url}/v1/clusters?name=${report.cluster}`, { headers: { 'X-Auth-Token': token } });
    expect(((await clusters.json()) as { clusters: unknown[] }).clusters).toEqual([]);
  }, 120_000);
});
