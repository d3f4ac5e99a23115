#!/bin/bash
# Description: tail-latency, small: 600 web-search flows (about 240 of
# them RPCs of 4-64 KiB) at 60% load on a k=4 fat tree, three seeds, tcp,
# tcp-over-srd and srd.  What the model shows on every seed it was tried
# on (1-8), asserted here on three:
#  - every RPC completes, with every transport;
#  - TCP's p99.9 RPC time is a retransmission timer's (>= 2 ms: a tail
#    loss probe, 2 srtt + 2 ms, or an RTO), TCP over SRD's and SRD's stay
#    below 2 ms and below half of TCP's: the losses that make TCP's tail
#    are repaired under TCP in microseconds;
#  - TCP over SRD's TCP never retransmits nor times out (its SRD layer
#    does), while plain TCP does both;
#  - SRD's median RPC time is below both TCPs' (no TCP handshake, no
#    byte stream); TCP over SRD's median is above plain TCP's (TCP's
#    handshake crosses the SRD layer, which has its own handshake with
#    each new peer).
# p99 alone is not asserted: with ~240 RPCs its order between tcp and
# tcp-over-srd moves with the seed (docs/scenarios.md has the full runs).
. "$(dirname "$0")/scenario_lib.sh"
base=${SRD_TEST_SEED:-1}
SEED_ARGS=()
for i in 0 1 2; do
  sim "s$i.json" tail-latency --set workload.flows=600 --seed $((base + i))
done
python3 - "$tmp" <<'PY' || fail "tail-latency"
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/s*.json")):
    d = json.load(open(f))
    t = {x["name"]: x for x in d["transports"]}
    tcp, tos, srd = t["tcp"], t["tcp-over-srd"], t["srd"]
    row = lambda x: "p50 %.1f p99 %.1f p99.9 %.1f us" % (
        x["rpc_us"]["p50"], x["rpc_us"]["p99"], x["rpc_us"]["p999"])
    print("seed %d: %d RPCs" % (d["seed"], tcp["rpcs"]))
    for n, x in (("tcp", tcp), ("tcp-over-srd", tos), ("srd", srd)):
        print("  %-13s %s, slowdown p99 %.1f" % (n, row(x),
                                                  x["rpc_slowdown"]["p99"]))
    for x in (tcp, tos, srd):
        assert x["rpcs"] >= 150, "too few RPCs to say anything"
        assert x["rpcs_done"] == x["rpcs"], (x["name"], "RPCs left undone")
        assert x["flows_done"] == x["flows"], (x["name"], "flows left undone")
    assert tcp["rpc_us"]["p999"] >= 2000, "TCP's tail should be a timer's"
    for x in (tos, srd):
        assert x["rpc_us"]["p999"] < 2000, (x["name"], "tail of a timer")
        assert x["rpc_us"]["p999"] < tcp["rpc_us"]["p999"] / 2, x["name"]
    assert tos["retransmits"] == 0 and tos["timeouts"] == 0, \
        "TCP over SRD's TCP repaired a loss itself"
    assert tos["srd_below"]["retransmits"] > 0, "nothing repaired below"
    assert tcp["retransmits"] > 0 and tcp["timeouts"] > 0
    assert srd["rpc_us"]["p50"] < tcp["rpc_us"]["p50"] < tos["rpc_us"]["p50"]
PY
echo "ok"
