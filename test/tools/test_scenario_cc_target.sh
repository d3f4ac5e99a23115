#!/bin/bash
# Description: SRD's delay target following the path (issue 9, artefact 2).
# ecmp-collision (4, 8 and 16 spines, 3 ms, three seeds): with the fixed
# 25 us target, longer than a 200 KB port drains at 100 Gb/s (16 us), SRD
# overflows the leaf's uplinks (about a hundred queue drops at 4 spines and
# hundreds above since steering evens out the hash); with the target
# at half the measured base RTT (target_rtt_pct = 50, about 6 us here)
# the delay signal acts first: queue drops near zero (at most 0.1% of the
# data packets, and at most 5% of the fixed target's) and the throughput
# at least 0.9 of the capacity.  single-flow: no queue drops either way, and
# the deepest queue (the receiver's 25 Gb/s port, where eight 5 Gb/s paths
# meet) no deeper with the path target than with the fixed one.
. "$(dirname "$0")/scenario_lib.sh"
base=${SRD_TEST_SEED:-1}
SEED_ARGS=()
for i in 0 1 2; do
  for pct in 0 50; do
    sim "e$i-$pct.json" ecmp-collision --only srd --set scenario.duration=3ms \
      --set transport.srd.target_rtt_pct=$pct --seed $((base + i))
  done
done
for pct in 0 50; do
  sim "s-$pct.json" single-flow --only srd --seed "$base" \
    --set transport.srd.target_rtt_pct=$pct
done
python3 - "$tmp" <<'PY' || fail "cc target"
import json, sys
d = sys.argv[1]
def runs(name):
    return json.load(open(f"{d}/{name}.json"))["transports"]
for i in range(3):
    for fixed, path in zip(runs(f"e{i}-0"), runs(f"e{i}-50")):
        qf = fixed["drops_by_reason"]["queue"]
        qp = path["drops_by_reason"]["queue"]
        print(path["point"], "queue drops", qf, "->", qp,
              "throughput", round(fixed["throughput_fraction"], 3), "->",
              round(path["throughput_fraction"], 3))
        assert qf > 50, ("the fixed target no longer overflows", fixed)
        assert qp <= 0.001 * path["data_pkts"] and qp <= 0.05 * qf, path
        # Steering that evens out the hash keeps it at 0.9 of capacity
        # (0.83-0.85 before, when one hot uplink was left to avoidance).
        assert path["throughput_fraction"] >= 0.9, path
deepest = {}
for pct in (0, 50):
    s = runs(f"s-{pct}")[0]
    print("single-flow pct", pct, "deepest", s["max_queue_bytes"],
          "drops", s["drops_by_reason"]["queue"],
          "throughput", round(s["throughput_fraction"], 3))
    assert s["drops_by_reason"]["queue"] == 0, s
    assert s["throughput_fraction"] >= 0.8, s
    deepest[pct] = s["max_queue_bytes"]
assert deepest[50] <= deepest[0], deepest
PY
echo "ok"
