#!/bin/bash
# Description: srd-loopback --pcap writes valid captures (frame counts match
# the engines' packet counters, IPv4 and UDP checksums hold, the UDP source
# port is the SRD path, snap lengths), and the Wireshark dissector
# (tools/wireshark/srd.lua, run by tshark) decodes every packet type with
# the counts the engines report, finds no malformed packet in a clean run,
# and survives the packet fuzz corpus without a Lua error.
set -u
OUT=${OUT:-build}
BIN=$OUT/bin/srd-loopback
LUA=tools/wireshark/srd.lua
CORPUS=test/fuzz/corpus/fuzz_pkt
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

args=(--paths 8 --loss 2 --dup 1 --reorder 5 --messages 300 --size 64K
      --seed 11 --json)
"$BIN" "${args[@]}" --pcap "$tmp/send.pcap" > "$tmp/send.json" ||
  fail "send capture run exited $?"
"$BIN" "${args[@]}" --pcap "$tmp/recv.pcap" --pcap-at recv \
  --pcap-snaplen 0 > "$tmp/recv.json" || fail "recv capture run exited $?"
cmp -s "$tmp/send.json" "$tmp/recv.json" ||
  fail "capturing changed the run's results"

# Bad capture flags and an unwritable file: clear messages, no run.
"$BIN" --messages 1 --pcap-at middle > /dev/null 2> "$tmp/err"
[ $? = 2 ] || fail "--pcap-at middle: expected exit status 2"
grep -q "pcap-at" "$tmp/err" || fail "no message for --pcap-at: $(cat "$tmp/err")"
"$BIN" --messages 1 --pcap "$tmp/no/such/dir/x.pcap" > /dev/null 2> "$tmp/err"
[ $? = 1 ] || fail "unwritable capture: expected exit status 1"
grep -q "cannot write the capture" "$tmp/err" ||
  fail "no message for an unwritable capture: $(cat "$tmp/err")"

# The pcap files, read with nothing but the format's definition.
python3 - "$tmp" <<'PY' || fail "pcap check"
import json, struct, sys
tmp = sys.argv[1]

def frames(path):
    data = open(path, "rb").read()
    magic, vmaj, vmin, _, _, snap, link = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xa1b23c4d, "not a nanosecond pcap: %x" % magic
    assert (vmaj, vmin, link) == (2, 4, 1), (vmaj, vmin, link)
    pos, last = 24, 0
    while pos < len(data):
        sec, nsec, cap, length = struct.unpack("<IIII", data[pos:pos + 16])
        assert nsec < 10**9 and cap <= length and cap <= snap
        t = sec * 10**9 + nsec
        assert t >= last, "timestamps go back"
        last = t
        yield cap, length, data[pos + 16:pos + 16 + cap]
        pos += 16 + cap

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s

def check(path, full):
    n = 0
    for cap, length, f in frames(path):
        n += 1
        assert f[12:14] == b"\x08\x00", "not IPv4"
        ip = f[14:34]
        assert csum(ip) == 0xffff, "bad IPv4 header checksum"
        assert struct.unpack("!H", ip[2:4])[0] == length - 14
        sport, dport, ulen, uck = struct.unpack("!HHHH", f[34:42])
        assert dport == 21316 and ulen == length - 34
        srd = f[42:]
        assert srd[0] == 1, "SRD version"
        path = struct.unpack("!H", srd[12:14])[0]
        assert sport == 49152 + path, (sport, path)
        if full:
            assert cap == length, "snaplen 0 must keep whole frames"
            pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, ulen)
            assert csum(pseudo + f[34:]) == 0xffff, "bad UDP checksum"
        else:
            assert cap == min(length, 1024), (cap, length)
    return n

s = json.load(open(tmp + "/send.json"))
sent = sum(s[e][k] for e in ("a_pkts_out", "b_pkts_out")
           for k in ("data", "ack", "ctrl"))
n_send = check(tmp + "/send.pcap", False)
n_recv = check(tmp + "/recv.pcap", True)
assert n_send == sent, ("send capture", n_send, "packets written", sent)
assert n_recv == s["wire_delivered"], ("recv capture", n_recv,
                                       s["wire_delivered"])
assert n_recv != n_send, "loss and duplication should change the count"
print("pcap: %d frames as sent, %d as received" % (n_send, n_recv))
PY

if ! command -v tshark >/dev/null; then
  echo "tshark missing (tools/install-deps.sh installs it): dissector not tested"
  exit 0
fi
ts() { tshark -X "lua_script:$LUA" "$@" 2>&1 | grep -v '^Running as user'; }
ts -r "$tmp/send.pcap" -T fields -e srd.type -e srd.tx_count \
  > "$tmp/types.txt" || fail "tshark failed"
grep -qi "lua" "$tmp/types.txt" && fail "Lua error: $(grep -i lua "$tmp/types.txt" | head -3)"
python3 - "$tmp" <<'PY' || fail "dissector counts"
import json, sys
tmp = sys.argv[1]
s = json.load(open(tmp + "/send.json"))
count, retx = {}, 0
for line in open(tmp + "/types.txt"):
    parts = line.split("\t")
    t = int(parts[0])
    count[t] = count.get(t, 0) + 1
    if t == 1 and int(parts[1]) > 1:
        retx += 1
a, b = s["a_pkts_out"], s["b_pkts_out"]
assert count.get(1, 0) == a["data"] + b["data"], count
assert count.get(2, 0) == a["ack"] + b["ack"], count
ctrl = sum(v for k, v in count.items() if k >= 3)
assert ctrl == a["ctrl"] + b["ctrl"], count
assert retx == s["retransmits"], ("retransmissions", retx, s["retransmits"])
print("dissector: %d DATA (%d retransmissions), %d ACK, %d control" %
      (count.get(1, 0), retx, count.get(2, 0), ctrl))
PY
[ $? = 0 ] || exit 1
ts -r "$tmp/recv.pcap" -q -z expert > "$tmp/expert.txt" || fail "tshark -z expert"
grep -q "Malformed" "$tmp/expert.txt" && fail "a clean run has malformed packets: $(cat "$tmp/expert.txt")"

# The fuzz corpus (valid, truncated and hostile packets) wrapped in frames:
# the dissector must decode or flag each, never raise a Lua error.
python3 - "$CORPUS" "$tmp/fuzz.pcap" <<'PY' || fail "writing the corpus capture"
import os, struct, sys
src, out = sys.argv[1], sys.argv[2]
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
    for i, name in enumerate(sorted(os.listdir(src))):
        srd = open(os.path.join(src, name), "rb").read()[:65000]
        udp = struct.pack("!HHHH", 49152 + i % 64, 21316, 8 + len(srd), 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(srd), i, 0, 64,
                         17, 0, bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
        frame = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip + udp + srd
        f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
print("corpus: %d packets" % len(os.listdir(src)))
PY
ts -r "$tmp/fuzz.pcap" -V > "$tmp/fuzz.txt" || fail "tshark on the corpus"
if grep -qi "lua error" "$tmp/fuzz.txt"; then
  fail "Lua error on the corpus: $(grep -i -m3 "lua error" "$tmp/fuzz.txt")"
fi
frames=$(grep -c "^Frame " "$tmp/fuzz.txt")
[ "$frames" -eq "$(ls "$CORPUS" | wc -l)" ] || fail "tshark decoded $frames frames"
echo "dissector: corpus of $frames packets decoded without a Lua error"
