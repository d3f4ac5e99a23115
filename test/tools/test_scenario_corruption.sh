#!/bin/bash
# Description: corruption, small: RPCs of 64 KiB, eight pairs of 16 calls,
# a bit-error rate of 1e-6 on every link.  Links corrupt packets and
# deliver them; both receivers must find every one.  TCP's checksum drops
# them and its repair times out; SRD's CRCs (wire format 2) drop them,
# nothing corrupted is accepted, and every message is delivered, with a
# p99.9 latency far below TCP's 200 ms floor.
. "$(dirname "$0")/scenario_lib.sh"
args=(--set scenario.sweep= --set faults.ber=1e-6 --set workload.bytes=1M
  --set scenario.duration=2s)
sim a.json corruption "${args[@]}"
"$SIM" run scenarios/corruption.ini --quiet -o "$tmp/out" "${SEED_ARGS[@]}" \
  "${args[@]}" > /dev/null || fail "srd-sim -o exited $?"
python3 - "$tmp/a.json" "$tmp/out/corruption.csv" <<'PY'
import csv, json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
rows = {r["transport"]: r for r in csv.DictReader(open(sys.argv[2]))}
for n in ("srd", "tcp"):
    c = t[n]["corruption"]
    print("%s: %d/%d messages, p99.9 %.1f us, corruption %s" % (
        n, t[n]["messages_done"], t[n]["messages"],
        t[n]["msg_latency_us"]["p999"], c))
    # The links corrupted packets and delivered them (not as drops).
    assert c["corrupted"] > 0 and c["bit_errors"] >= c["corrupted"], c
    assert 0 < c["received"] <= c["corrupted"], c
    assert c["in_header"] <= c["received"], c
    assert t[n]["drops_by_reason"]["loss"] == 0, t[n]
    # The CSV says what the JSON says.
    assert int(rows[n]["received"]) == c["received"], rows[n]
    assert int(rows[n]["accepted"]) == c["accepted"], rows[n]
tc = t["tcp"]["corruption"]
assert tc["detected"] == tc["received"], "TCP's checksum drops every one"
assert tc["other_drops"] == 0 and tc["accepted"] == 0, tc
assert tc["unmatched_deliveries"] == 0, tc
assert t["tcp"]["timeouts"] > 0, "a corrupted tail costs TCP an RTO"
assert t["tcp"]["messages_done"] > 0
# SRD: what the engine's CRCs must achieve.
s, sc = t["srd"], t["srd"]["corruption"]
bad = []
def want(ok, what):
    if not ok:
        bad.append(what)
want(sc["accepted"] == 0, "no corrupted packet accepted (%d were)" %
     sc["accepted"])
want(sc["detected"] > 0 and sc["detected"] + sc["other_drops"] ==
     sc["received"], "every corrupted packet dropped, as corrupt (%d of %d)"
     % (sc["detected"], sc["received"]))
want(sc["unmatched_deliveries"] == 0, "no duplicate or unmatched delivery "
     "(%d)" % sc["unmatched_deliveries"])
want(s["messages_done"] == s["messages"] == 128 and s["send_errors"] == 0,
     "every message delivered (%d of %d posted, 128 in all)" %
     (s["messages_done"], s["messages"]))
want(s["msg_latency_us"]["p999"] * 100 <= t["tcp"]["msg_latency_us"]["p999"],
     "SRD's p99.9 at least 100x below TCP's")
if bad:
    for b in bad:
        print("SRD: not met: " + b)
    sys.exit(1)
PY
[ $? -eq 0 ] || fail "corruption"
echo "ok"
