import { evaluate } from './evaluate';
test('perf', () => {
  const nodes = Array.from({ length: 1000 }, (_, i) => ({ id: `n${i}`, status: 'ACTIVE', created_at: '2024-01-01T00:00:00Z', data: { placement: { zone: `az${i % 3}` } } }));
  const profile = { type: 'os.nova.server-1.0', spec: {} };
  const zp = { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az0' }, { name: 'az1', weight: 50 }, { name: 'az2' }] } };
  const aff = { type: 'senlin.policy.affinity', version: 1.0, properties: {} };
  const sc = { type: 'senlin.policy.scaling', version: 1.0, properties: { event: 'CLUSTER_SCALE_OUT' } };
  const de = { type: 'senlin.policy.deletion', version: 1.1, properties: {} };
  const cloud = { availability_zones: ['az0', 'az1', 'az2'], hypervisors: [], server_groups: [] };
  const one = { policies: [{ id: 'z', name: 'z', spec: zp }], cluster: { id: 'c', max_size: -1, profile, nodes }, cloud, action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } }, now: '2024-01-01T00:00:00Z' };
  const full = { ...one, policies: [{ id: 's', name: 's', spec: sc }, { id: 'z', name: 'z', spec: zp }, { id: 'a', name: 'a', spec: aff, binding_data: { AffinityPolicy: { version: '1.0', data: { servergroup_id: 'SG' } } } }, { id: 'd', name: 'd', spec: de }] };
  for (const [name, input] of [['zone', one], ['full', full]] as const) {
    for (let i = 0; i < 20000; i++) evaluate(input as never);
    const n = 50000;
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) evaluate(input as never);
    console.log(name, Number(process.hrtime.bigint() - t) / n / 1000, 'µs');
  }
});
