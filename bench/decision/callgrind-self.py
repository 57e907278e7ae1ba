#!/usr/bin/env python3
"""Self instructions by function in a callgrind dump, JIT code named from Node's perf map.

  python3 bench/decision/callgrind-self.py DUMP [--perf-map /tmp/perf-PID.map] [--calls N] [--top 40]

DUMP: the window dump of bench/decision/instructions.sh (run it with KEEP=1, and with
NODE_FLAGS="--predictable --predictable-gc-schedule --perf-basic-prof" for the map; the map of the
M2 run is the newer /tmp/perf-*.map). Costs are divided by --calls (the window's calls) to read per
call. A JIT address is named by the perf map entry holding it; without a map it stays an address.
"""
import argparse
import bisect
import collections
import re

ap = argparse.ArgumentParser()
ap.add_argument('dump')
ap.add_argument('--perf-map')
ap.add_argument('--calls', type=float, default=1.0)
ap.add_argument('--top', type=int, default=40)
args = ap.parse_args()

names, self_cost = {}, collections.Counter()
fn, skip_next = None, False
for line in open(args.dump):
    line = line.rstrip('\n')
    m = re.match(r'^fn=\((\d+)\)(?: (.*))?$', line)
    if m:
        if m.group(2):
            names[m.group(1)] = m.group(2)
        fn = names.get(m.group(1), m.group(1))
        continue
    m = re.match(r'^(c?fn|c?fi|c?fe|c?ob|fl)=\((\d+)\)(?: (.*))?$', line)
    if m:
        if m.group(1) == 'cfn' and m.group(3):
            names[m.group(2)] = m.group(3)
        continue
    if line.startswith('calls='):
        skip_next = True  # the next cost line is the call's inclusive cost, not self
        continue
    if line and (line[0].isdigit() or line[0] in '+-*') and fn is not None:
        if skip_next:
            skip_next = False
            continue
        parts = line.split()
        if len(parts) >= 2:
            self_cost[fn] += int(parts[1])

entries = []
if args.perf_map:
    for l in open(args.perf_map):
        a, s, n = l.rstrip('\n').split(' ', 2)
        entries.append((int(a, 16), int(s, 16), n))
    entries.sort()
starts = [e[0] for e in entries]


def jit_name(text):
    addr = int(text.split("'")[0], 16)
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and entries[i][0] <= addr < entries[i][0] + entries[i][1]:
        return entries[i][2]
    return 'JIT (unnamed)' if entries else text


agg = collections.Counter()
for name, cost in self_cost.items():
    agg[jit_name(name) if name.startswith('0x') else name] += cost
total = sum(agg.values())
print(f'total {total / args.calls:,.0f} per call')
for name, cost in agg.most_common(args.top):
    print(f'{cost / args.calls:12,.1f} {100 * cost / total:5.1f}%  {name[:140]}')
