#!/bin/bash
# Description: tcp-over-srd (TCP's segments carried by SRD in ordered
# mode, as ENA Express runs unmodified TCP), through the scenario path.
#  1. A 16 MiB flow over 4 paths of 5 Gb/s with 1% loss on the cable the
#     TCP connection hashes onto: every message of it is delivered, in
#     order (TCP never holds a message behind a hole) and once; the loss
#     is repaired below TCP (TCP retransmits nothing and never times
#     out, the SRD layer retransmits), where plain TCP on the same cable
#     retransmits and holds messages behind holes.
#  2. ECMP spreads the one TCP connection over all four paths (every
#     path's share above 0.15) where plain TCP's sits on one; it runs at
#     least 2.5x plain TCP.
#  3. The scenarios that show it beside tcp and srd (single-flow,
#     ecmp-collision) list it.
. "$(dirname "$0")/scenario_lib.sh"
sim loss.json single-flow --set scenario.transports=tcp,tcp-over-srd \
  --set topology.paths=4 --set workload.bytes=16M --set workload.message=64K \
  --set faults.link_loss=tcpflow0:1% --set scenario.duration=1s
python3 - "$tmp/loss.json" <<'PY' || fail "tcp-over-srd under loss"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
o, c = t["tcp-over-srd"], t["tcp"]
print("tcp-over-srd: %d/%d messages, TCP rtx %d RTO %d, SRD rtx %d, "
      "held behind a hole %d, link losses %d"
      % (o["messages_done"], o["messages"], o["retransmits"], o["timeouts"],
         o["srd_below"]["retransmits"], o["hol_blocked_msgs"],
         o["drops_by_reason"]["loss"]))
print("tcp:          %d/%d messages, TCP rtx %d, held behind a hole %d, "
      "link losses %d" % (c["messages_done"], c["messages"], c["retransmits"],
                          c["hol_blocked_msgs"], c["drops_by_reason"]["loss"]))
assert o["kind"] == "tcp-over-srd"
assert o["flows_done"] == 1 and o["messages"] == 256, o
assert o["messages_done"] == o["messages"], "a message was not delivered"
assert o["hol_blocked_msgs"] == 0, "TCP saw a hole: SRD delivered out of order"
assert o["drops_by_reason"]["loss"] > 0, "the faulty cable lost nothing"
assert o["retransmits"] == 0 and o["timeouts"] == 0 and o["probes"] == 0, \
    "TCP repaired a loss that SRD should have repaired below it"
assert o["fast_recoveries"] == 0, "TCP entered recovery"
assert o["srd_below"]["retransmits"] > 0, "the SRD layer repaired nothing"
assert o["srd_below"]["send_errors"] == 0
# Plain TCP on the same cable: the loss reaches it.
assert c["drops_by_reason"]["loss"] > 0 and c["retransmits"] > 0
assert c["hol_blocked_msgs"] > 0
PY
sim spread.json single-flow --set scenario.transports=tcp,tcp-over-srd \
  --set topology.paths=4 --set scenario.duration=5ms
python3 - "$tmp/spread.json" <<'PY' || fail "tcp-over-srd spreading"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
o, c = t["tcp-over-srd"], t["tcp"]
print("shares tcp", [round(s, 3) for s in c["path_share"]],
      "tcp-over-srd", [round(s, 3) for s in o["path_share"]])
print("tcp %.2f Gb/s, tcp-over-srd %.2f Gb/s" % (c["throughput_gbps"],
                                                 o["throughput_gbps"]))
assert max(c["path_share"]) > 0.95, "plain TCP should use one path"
assert len(o["path_share"]) == 4 and min(o["path_share"]) > 0.15, \
    "one TCP connection over SRD should use every path"
assert o["throughput_gbps"] >= 2.5 * c["throughput_gbps"]
assert o["retransmits"] == 0
PY
for s in single-flow ecmp-collision; do
  grep -Eq '^transports *=.*\btcp-over-srd\b' "scenarios/$s.ini" ||
    fail "scenarios/$s.ini does not list tcp-over-srd"
done
echo "ok"
