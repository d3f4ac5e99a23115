#!/bin/bash
# Description: asymmetric, small: four flows over four spines, one at half
# rate, 5 ms.  Path-aware SRD beats blind spraying (srd-blind): more
# throughput, a shorter tail, far fewer drops, and less of its traffic on
# the slow spine.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json asymmetric --set scenario.duration=5ms
python3 - "$tmp/a.json" <<'PY' || fail "asymmetric"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
a, b = t["srd"], t["srd-blind"]
print("srd %.1f Gb/s, %d drops, slow-spine share %.3f; blind %.1f Gb/s, %d drops, %.3f" % (
    a["throughput_gbps"], a["drops"], a["path_share"][0],
    b["throughput_gbps"], b["drops"], b["path_share"][0]))
assert a["throughput_gbps"] > b["throughput_gbps"]
assert a["msg_latency_us"]["p99"] < b["msg_latency_us"]["p99"]
assert b["drops"] >= 2 * a["drops"]
assert a["path_share"][0] < b["path_share"][0] < 0.25 + 0.02
PY
echo "ok"
