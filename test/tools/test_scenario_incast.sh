#!/bin/bash
# Description: incast, small: 16 senders answer one receiver with 256 KiB
# each, five synchronised rounds, a 200 KB port buffer.  TCP's goodput
# collapses (RTO-bound rounds); SRD keeps most of the line rate, at least
# 10x TCP, and a 1 ms RTO (tcp-tuned) lands in between.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json incast --set scenario.sweep= --set workload.senders=16 \
  --set workload.rounds=5 --set scenario.transports=srd,tcp,tcp-tuned
python3 - "$tmp/a.json" <<'PY' || fail "incast"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
f = {n: t[n]["throughput_fraction"] for n in t}
print("goodput fractions", {n: round(v, 3) for n, v in f.items()})
for n in t:
    assert t[n]["flows_done"] == t[n]["flows"] == 80, t[n]
assert f["tcp"] < 0.1, "TCP should collapse"
assert f["srd"] >= 0.5, "SRD should keep most of the line rate"
assert f["srd"] >= 10 * f["tcp"]
assert f["tcp"] < f["tcp-tuned"] < f["srd"]
assert t["tcp"]["fct_us"]["max"] >= 200000, "a round should wait for the RTO"
PY
echo "ok"
