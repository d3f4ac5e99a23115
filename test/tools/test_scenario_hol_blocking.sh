#!/bin/bash
# Description: hol-blocking, small: 2000 independent 64 KiB messages, 1%
# loss on the path TCP hashes onto.  TCP's messages sit arrived but
# unreadable behind holes; SRD delivers each as it completes (none
# blocked); ordered SRD pays for order only with SRD's fast recovery.
. "$(dirname "$0")/scenario_lib.sh"
sim a.json hol-blocking --set workload.count=2000
python3 - "$tmp/a.json" <<'PY' || fail "hol-blocking"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
for n in t:
    assert t[n]["messages_done"] == 2000, t[n]
    print(n, "p99.9 %.1f us, unreadable %.1f us in %d messages" % (
        t[n]["msg_latency_us"]["p999"], t[n]["hol_blocked_us_total"],
        t[n]["hol_blocked_msgs"]))
assert t["tcp"]["drops_by_reason"]["loss"] > 0, "TCP's path should lose"
assert t["tcp"]["hol_blocked_us_total"] > 0 and t["tcp"]["hol_blocked_msgs"] > 0
assert t["srd"]["hol_blocked_us_total"] == 0
assert t["srd"]["msg_latency_us"]["p999"] < t["tcp"]["msg_latency_us"]["p999"]
assert t["srd-ordered"]["msg_latency_us"]["p999"] >= t["srd"]["msg_latency_us"]["p999"]
PY
echo "ok"
