#!/usr/bin/env python3
"""Senlin's own ZonePlacementPolicy.pre_op (Debian python3-senlin) on the decision benchmark's snapshots.

The method of ../shared/bench/senlin-zone-preop.py (database and Nova replaced by in-memory fakes,
so only the policy's own work is timed; time.perf_counter around each pre_op call), but the cluster
is the snapshot Trellis decides on: the same nodes with the same zones, the same zone weights, the
same operation and count. Reads a JSON list of scenarios on stdin:
  [{"key": ..., "zones": [{"name", "weight"}], "node_zones": [...], "action": "CLUSTER_SCALE_OUT",
    "count": 1, "samples": 2000, "warmup": 200}]
and writes one JSON object per scenario, one a line: {"key", "median_us", "p99_us", "samples", "plan"}.
"""
import json
import statistics
import sys
import time
from unittest import mock

from senlin.engine import cluster as cluster_mod
from senlin.policies import zone_placement as zp


class FakeNode:
    def __init__(self, zone):
        self.data = {'placement': {'zone': zone}}


class FakeCluster:
    get_zone_distribution = cluster_mod.Cluster.get_zone_distribution

    def __init__(self, zones):
        self.nodes = [FakeNode(z) for z in zones]
        self.user = self.project = 'p'


class FakeNova:
    def validate_azs(self, names):
        return list(names)


class FakeAction:
    def __init__(self, action, count):
        self.action = action
        self.inputs = {'count': count}
        self.data = {}
        self.context = None


def run(s):
    spec = {'type': 'senlin.policy.zone_placement', 'version': '1.0',
            'properties': {'zones': s['zones']}}
    policy = zp.ZonePlacementPolicy('zp', spec)
    cluster = FakeCluster(s['node_zones'])
    times = []
    key = 'creation' if s['action'] == 'CLUSTER_SCALE_OUT' else 'deletion'
    with mock.patch.object(zp.cm.Cluster, 'load', return_value=cluster), \
            mock.patch.object(zp.ZonePlacementPolicy, 'nova', return_value=FakeNova()):
        for i in range(s['warmup'] + s['samples']):
            a = FakeAction(s['action'], s['count'])
            t0 = time.perf_counter()
            policy.pre_op('C', a)
            t = time.perf_counter() - t0
            if i >= s['warmup']:
                times.append(t)
    assert a.data[key]['count'] == s['count'], a.data
    times.sort()
    n = len(times)
    return {'key': s['key'], 'median_us': statistics.median(times) * 1e6,
            'p99_us': times[max(0, -(-99 * n // 100) - 1)] * 1e6, 'samples': n, 'plan': a.data[key]['zones']}


if __name__ == '__main__':
    for scenario in json.load(sys.stdin):
        print(json.dumps(run(scenario)), flush=True)
