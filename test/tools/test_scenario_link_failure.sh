#!/bin/bash
# Description: link-failure, small: the cable under the first TCP flow dies
# at 20 ms and routing takes 200 ms to notice; 400 ms in all.  The TCP flow
# stalls for at least its 200 ms RTO (in fact until the run ends: its
# backed-off RTO outlasts the blackhole); SRD's longest stall is at least
# ten times shorter and it keeps most of the remaining capacity.  SRD's
# packets dying at the dead cable (mostly ACKs: a quarter of the reverse
# entropies hash onto it) stay under 1/20 of its control packets: its
# steering finds the paths whose ACKs never come back and lightens them
# (2.5-3.7% over seeds 1-8; without that, 9.7-13.6%).
. "$(dirname "$0")/scenario_lib.sh"
sim a.json link-failure --set scenario.duration=400ms \
  --set topology.reconverge=200ms --set faults.down=tcpflow0@20ms
python3 - "$tmp/a.json" <<'PY' || fail "link-failure"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
s, c = t["srd"]["max_stall_us"], t["tcp"]["max_stall_us"]
print("longest stall: srd %.0f us, tcp %.0f us" % (s, c))
for n in ("srd", "tcp"):
    assert t[n]["drops_by_reason"]["link_down"] > 0, n
assert c >= 200000, "the TCP flow on the dead cable should stall >= 200 ms"
assert t["tcp"]["timeouts"] >= 1
assert s * 10 <= c and s < 50000, "SRD should route around the dead cable"
assert t["srd"]["throughput_fraction"] >= 0.6
down, ctrl = t["srd"]["drops_by_reason"]["link_down"], t["srd"]["ctrl_pkts"]
print("srd: %d packets dropped at the dead cable, %d control packets" %
      (down, ctrl))
assert down * 20 <= ctrl, "SRD's ACKs should leave the dead way back"
PY
echo "ok"
