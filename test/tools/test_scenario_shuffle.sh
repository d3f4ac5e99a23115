#!/bin/bash
# Description: shuffle, small: all-to-all among the 16 hosts of a k=4 fat
# tree, 1 MiB per pair.  Every receiver is a 15-way incast: the shuffle over
# TCP waits for a 200 ms RTO, over SRD it ends in about the ideal time.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json shuffle --set scenario.sweep= --set topology.k=4 \
  --set workload.ranks=16
python3 - "$tmp/a.json" <<'PY' || fail "shuffle"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
m = {n: t[n]["fct_us"]["max"] for n in t}
print("shuffle completion (us)", {n: round(v) for n, v in m.items()})
for n in t:
    assert t[n]["flows_done"] == t[n]["flows"] == 240, t[n]
# 15 MiB out of and into every host at 100 Gb/s: 1.26 ms at best.
assert 1258 <= m["srd"] <= 3 * 1258, "SRD should be near the ideal"
assert m["tcp"] >= 200000, "TCP should wait for an RTO"
assert m["srd"] * 5 <= m["tcp-tuned"] * 5 <= m["tcp"]
PY
echo "ok"
