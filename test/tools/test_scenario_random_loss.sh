#!/bin/bash
# Description: random-loss, small: RPCs of 64 KiB, eight pairs of 64 calls,
# 1% loss on the paths.  TCP's p99.9 message latency pays its 200 ms RTO
# floor (a message's lost last segment, alone in flight, waits for a tail
# loss probe that Linux caps at the RTO's time); SRD's p99.9 is at least
# 100x below TCP's.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json random-loss --set scenario.sweep= --set faults.loss=1% \
  --set workload.bytes=4M
python3 - "$tmp/a.json" <<'PY' || fail "random-loss"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
s, c = t["srd"]["msg_latency_us"]["p999"], t["tcp"]["msg_latency_us"]["p999"]
print("p99.9: srd %.1f us, tcp %.1f us, ratio %.0f" % (s, c, c / s))
for n in ("srd", "tcp"):
    assert t[n]["messages_done"] == t[n]["messages"] == 512, t[n]
    assert t[n]["drops_by_reason"]["loss"] > 0
assert c >= 200000, "TCP's tail should include its 200 ms RTO"
assert t["tcp"]["timeouts"] + t["tcp"]["probes"] > 0
assert s * 100 <= c, "SRD's p99.9 should be at least 100x below TCP's"
PY
echo "ok"
