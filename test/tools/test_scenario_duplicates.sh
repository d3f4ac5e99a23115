#!/bin/bash
# Description: duplicates: a stream of 5000 messages of 64 KiB over 4
# paths for 1 s, every link duplicating 10% of its packets, each copy
# 300 ms after its original (beyond TCP's 200 ms minimum RTO and every
# SRD timer).  The copies must reach both receivers, and neither may
# deliver anything twice: every message delivered, once, by SRD and by
# TCP, without a timeout.  The same run without duplication has no
# duplicate counts at all (its output is what it always was).
. "$(dirname "$0")/scenario_lib.sh"
args=(--set faults.dup=10%)
sim a.json duplicates "${args[@]}"
sim b.json duplicates --set faults.dup=0
"$SIM" run scenarios/duplicates.ini --quiet -o "$tmp/out" "${SEED_ARGS[@]}" \
  "${args[@]}" > /dev/null || fail "srd-sim -o exited $?"
python3 - "$tmp/a.json" "$tmp/b.json" "$tmp/out/duplicates.csv" <<'PY'
import csv, json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["transports"]}
clean = json.load(open(sys.argv[2]))["transports"]
rows = {r["transport"]: r for r in csv.DictReader(open(sys.argv[3]))}
for n in ("srd", "tcp"):
    x, d = t[n], t[n]["duplicates"]
    print("%s: %d/%d messages, p99.9 %.1f us, %d retransmits, %d timeouts, "
          "duplicates %s" % (n, x["messages_done"], x["messages"],
                             x["msg_latency_us"]["p999"], x["retransmits"],
                             x["timeouts"], d))
    # The links made copies and delivered them, late, to the receivers.
    assert d["duplicated"] > 1000 and d["skipped"] == 0, d
    assert 0 < d["received"] <= d["duplicated"], d
    # Nothing delivered twice: no second readable report, no completion
    # that matched no message in flight.
    assert d["delivered_twice"] == 0, d
    assert d["unmatched_deliveries"] == 0, d
    # Every message delivered (once: the counts above), nothing failed.
    assert x["messages"] == x["messages_done"] == 5000, x["messages_done"]
    assert x["send_errors"] == 0 and x["local_drops"] == 0, x
    assert x["timeouts"] == 0, x["timeouts"]
    # The CSV says what the JSON says.
    for k in d:
        assert int(rows[n][k]) == d[k], (k, rows[n])
for x in clean:
    assert "duplicates" not in x, x["name"]
    assert x["messages_done"] == 5000, x
PY
[ $? -eq 0 ] || fail "duplicates"
echo "ok"
