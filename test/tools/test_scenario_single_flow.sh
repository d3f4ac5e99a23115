#!/bin/bash
# Description: single-flow, small: one flow, 25 Gb/s hosts over 4 paths of
# 5 Gb/s, 5 ms.  TCP is pinned to one path (~5 Gb/s); SRD sprays over all
# four: at least 3x TCP (the issue's number for 4 paths).  tcp-over-srd,
# the same TCP connection carried by SRD, sprays as SRD does: 3x TCP too.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json single-flow --set topology.paths=4 --set scenario.duration=5ms
python3 - "$tmp/a.json" <<'PY' || fail "single-flow"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
s, c = t["srd"]["throughput_gbps"], t["tcp"]["throughput_gbps"]
print("srd %.2f Gb/s, tcp %.2f Gb/s, ratio %.2f" % (s, c, s / c))
assert 4.5 <= c <= 5.01, "TCP should run at one path's rate"
assert s >= 3 * c, "SRD should be at least 3x TCP over 4 paths"
assert max(t["tcp"]["path_share"]) > 0.95, "TCP used more than one path"
assert min(t["srd"]["path_share"]) > 0.1, "SRD left a path unused"
o = t["tcp-over-srd"]["throughput_gbps"]
print("tcp-over-srd %.2f Gb/s, ratio %.2f" % (o, o / c))
assert o >= 3 * c, "TCP over SRD should be at least 3x TCP over 4 paths"
assert min(t["tcp-over-srd"]["path_share"]) > 0.1, "TCP over SRD left a path"
PY
echo "ok"
