#!/bin/bash
# Description: srd-loopback --pcap writes valid captures (frame counts match
# the engines' packet counters, IPv4 and UDP checksums hold, the UDP source
# port is the SRD path, every header CRC and payload CRC holds, snap
# lengths), and the Wireshark dissector (tools/wireshark/srd.lua, run by
# tshark) decodes every packet type with the counts the engines report,
# finds no malformed packet and verifies every CRC in a clean run, flags
# packets corrupted on purpose, and survives the packet fuzz corpus without
# a Lua error.
#
#   test/tools/test_pcap.sh [BUILD_DIR]     (or OUT=BUILD_DIR; default build)
set -u
OUT=${1:-${OUT:-build}}
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

# CRC32C (Castagnoli), reflected, as srd_crc32c.h.
CRC_TAB = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TAB.append(c)

def crc32c(b, c=0):
    c ^= 0xffffffff
    for x in b:
        c = CRC_TAB[(c ^ x) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff

def span(srd):
    """The header length srd_pkt_span reads from type, flags and counts."""
    t, flags = srd[1], struct.unpack("!H", srd[2:4])[0]
    if t == 1:
        n = 76 if flags & 1 else 56
        if not flags & 2:
            return n
    elif t == 2:
        n = 20
    else:
        return {3: 52, 4: 52, 5: 40, 6: 28}[t]
    return n + 12 + 4 * srd[n + 6] + 20 * srd[n + 7] + 12 * srd[n + 8]

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s

def check(path, full):
    n = n_pcrc = 0
    for cap, length, f in frames(path):
        n += 1
        assert f[12:14] == b"\x08\x00", "not IPv4"
        ip = f[14:34]
        assert csum(ip) == 0xffff, "bad IPv4 header checksum"
        assert struct.unpack("!H", ip[2:4])[0] == length - 14
        sport, dport, ulen, uck = struct.unpack("!HHHH", f[34:42])
        assert dport == 21316 and ulen == length - 34
        srd = f[42:]
        assert srd[0] == 3, "SRD version"
        path = struct.unpack("!H", srd[12:14])[0]
        assert sport == 49152 + path, (sport, path)
        hl = span(srd)
        assert struct.unpack("!I", srd[16:20])[0] == \
            crc32c(srd[20:hl], crc32c(srd[:16])), "header CRC"
        if srd[1] == 1 and full and n_pcrc < 20:
            # The payload CRC of the first few DATA (pure Python is slow;
            # the dissector checks them all).
            n_pcrc += 1
            flags, pcrc = struct.unpack("!H", srd[2:4])[0], srd[52:56]
            want = crc32c(srd[hl:]) if flags & 4 else 0
            assert struct.unpack("!I", pcrc)[0] == want, "payload CRC"
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
crc_fields=(-e srd.flags.pcrc -e srd.hcrc.status -e srd.pcrc.status)
ts -r "$tmp/send.pcap" -T fields -e srd.type -e srd.tx_count "${crc_fields[@]}" \
  > "$tmp/types.txt" || fail "tshark failed"
grep -qi "lua" "$tmp/types.txt" && fail "Lua error: $(grep -i lua "$tmp/types.txt" | head -3)"
ts -r "$tmp/recv.pcap" -T fields -e srd.type -e srd.tx_count "${crc_fields[@]}" \
  > "$tmp/recv.txt" || fail "tshark failed"
grep -qi "lua" "$tmp/recv.txt" && fail "Lua error: $(grep -i lua "$tmp/recv.txt" | head -3)"
python3 - "$tmp" <<'PY' || fail "dissector counts"
import json, sys
tmp = sys.argv[1]
s = json.load(open(tmp + "/send.json"))
GOOD, UNVERIFIED = "1", "2"

def rows(name):
    for line in open(tmp + "/" + name):
        t, tries, pflag, hcrc, pcrc = line.rstrip("\n").split("\t")
        yield int(t), int(tries or 0), pflag == "1", hcrc, pcrc

# Every header CRC verifies; a DATA payload CRC verifies where the whole
# payload was captured and is left unverified where the snap length cut
# it (the send capture keeps 1024 bytes of each frame).
def crcs(name, cut):
    n_pcrc, unverified = 0, 0
    for t, _, pflag, hcrc, pcrc in rows(name):
        assert hcrc == GOOD, (name, "header CRC status", hcrc)
        if t == 1 and pflag:
            n_pcrc += 1
            unverified += pcrc == UNVERIFIED
            assert pcrc == GOOD or (cut and pcrc == UNVERIFIED), \
                (name, "payload CRC status", pcrc)
        else:
            assert pcrc == "", (name, "payload CRC status without PCRC")
    assert n_pcrc > 0, (name, "no DATA carries a payload CRC")
    assert (unverified > 0) == cut, (name, unverified, "unverified")
    return n_pcrc, unverified

count, retx = {}, 0
for t, tries, _, _, _ in rows("types.txt"):
    count[t] = count.get(t, 0) + 1
    if t == 1 and tries > 1:
        retx += 1
a, b = s["a_pkts_out"], s["b_pkts_out"]
assert count.get(1, 0) == a["data"] + b["data"], count
assert count.get(2, 0) == a["ack"] + b["ack"], count
ctrl = sum(v for k, v in count.items() if k >= 3)
assert ctrl == a["ctrl"] + b["ctrl"], count
assert retx == s["retransmits"], ("retransmissions", retx, s["retransmits"])
print("dissector: %d DATA (%d retransmissions), %d ACK, %d control" %
      (count.get(1, 0), retx, count.get(2, 0), ctrl))
n_send, cut = crcs("types.txt", True)
n_recv, _ = crcs("recv.txt", False)
print("dissector: every header CRC correct; payload CRCs: as sent %d correct, "
      "%d cut by the snap length; as received all %d correct" %
      (n_send - cut, cut, n_recv))
PY
[ $? = 0 ] || exit 1
ts -r "$tmp/recv.pcap" -q -z expert > "$tmp/expert.txt" || fail "tshark -z expert"
grep -q "Malformed" "$tmp/expert.txt" && fail "a clean run has malformed packets: $(cat "$tmp/expert.txt")"
grep -qi "CRC mismatch" "$tmp/expert.txt" && fail "a clean run has CRC mismatches: $(cat "$tmp/expert.txt")"

# A payload cut by the snap length (the send capture keeps 1024 bytes) is
# the usual case, not an anomaly: no expert note, the payload says how much
# was captured.  The Info column's ranges= is the Ranges field's value.
ts -r "$tmp/send.pcap" -q -z expert > "$tmp/expert-send.txt" || fail "tshark -z expert (send)"
grep -qi "Cut short" "$tmp/expert-send.txt" && fail "a payload cut by the snap length is flagged: $(grep -i "cut short" "$tmp/expert-send.txt")"
ts -r "$tmp/send.pcap" -V -Y 'srd.type == 1' > "$tmp/data-v.txt" || fail "tshark -V"
grep -qE "Payload: .* \[[0-9]+ of [0-9]+ bytes captured\]" "$tmp/data-v.txt" ||
  fail "a cut payload does not say how much was captured"
ts -r "$tmp/send.pcap" -Y 'srd.type == 2 && srd.flags.empty == 0' -T fields \
  -e srd.ack.ranges -e _ws.col.Info > "$tmp/ranges.txt" || fail "tshark ranges"
python3 - "$tmp/ranges.txt" <<'PY' || fail "ACK Info ranges= against the Ranges field"
import re, sys
n = 0
for line in open(sys.argv[1]):
    field, info = line.rstrip("\n").split("\t", 1)
    m = re.search(r"ranges=(\d+)", info)
    assert m and m.group(1) == field, (field, info)
    n += 1
assert n > 0, "no non-empty ACK"
PY
# srd-perf's default ports (18515 and the paths above it) are decoded as
# SRD without Decode As: a frame of the capture moved to 18520.
python3 - "$tmp/recv.pcap" "$tmp/port.pcap" <<'PY' || fail "writing the port capture"
import struct, sys
data = open(sys.argv[1], "rb").read()
cap = struct.unpack("<I", data[24 + 8:24 + 12])[0]
f = bytearray(data[24 + 16:24 + 16 + cap])
f[36:38] = struct.pack("!H", 18520)  # UDP destination port
f[40:42] = b"\0\0"                   # no UDP checksum
with open(sys.argv[2], "wb") as out:
    out.write(data[:24] + struct.pack("<IIII", 0, 0, len(f), len(f)) + bytes(f))
PY
[ "$(ts -r "$tmp/port.pcap" -T fields -e srd.type)" = 3 ] ||
  fail "a datagram to port 18520 is not decoded as SRD: $(ts -r "$tmp/port.pcap")"
echo "dissector: cut payloads unflagged, ACK ranges consistent, srd-perf's ports decoded"

# Corruption: copies of a DATA and an ACK from the clean capture, with a
# header byte or a payload byte flipped (and the UDP checksum made right
# again, as for damage that got past it): the dissector must flag exactly
# those, and pass the untouched copy.
python3 - "$tmp/recv.pcap" "$tmp/corrupt.pcap" <<'PY' || fail "writing the corrupted capture"
import struct, sys
data = open(sys.argv[1], "rb").read()
pos, pick = 24, {}
while pos < len(data) and len(pick) < 2:
    cap = struct.unpack("<I", data[pos + 8:pos + 12])[0]
    f = data[pos + 16:pos + 16 + cap]
    t, flags = f[43], struct.unpack("!H", f[44:46])[0]
    if (t == 1 and flags & 4 and len(f) > 42 + 64) or (t == 2 and
                                                      not flags & 1):
        pick.setdefault(t, f)
    pos += 16 + cap
assert len(pick) == 2, "no DATA with a payload CRC or no non-empty ACK"

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s

def flip(f, at):
    f = bytearray(f)
    f[at] ^= 0x10
    f[40:42] = b"\0\0"
    pseudo = bytes(f[26:34]) + struct.pack("!BBH", 0, 17, len(f) - 34)
    ck = 0xffff - csum(pseudo + bytes(f[34:]))
    f[40:42] = struct.pack("!H", ck or 0xffff)
    return bytes(f)

d, a = pick[1], pick[2]
frames = [d,                    # 1: untouched
          flip(d, 42 + 51),     # 2: DATA header (tx_ts)
          flip(d, len(d) - 1),  # 3: DATA payload (its last byte)
          flip(a, 42 + 23)]     # 4: ACK header (largest)
with open(sys.argv[2], "wb") as out:
    out.write(data[:24])
    for i, f in enumerate(frames):
        out.write(struct.pack("<IIII", 0, i, len(f), len(f)) + f)
PY
ts -r "$tmp/corrupt.pcap" -T fields -e frame.number -e srd.hcrc.status \
  -e srd.pcrc.status -e _ws.expert.message > "$tmp/corrupt.txt" ||
  fail "tshark on the corrupted capture"
python3 - "$tmp/corrupt.txt" <<'PY' || fail "corruption: $(cat "$tmp/corrupt.txt")"
import sys
got = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
# frame, header CRC status, payload CRC status (1 good, 0 bad), expert
want = [("1", "1", "1", None), ("2", "0", "1", "Header CRC mismatch"),
        ("3", "1", "0", "Payload CRC mismatch"),
        ("4", "0", "", "Header CRC mismatch")]
assert len(got) == len(want), got
for (frame, hcrc, pcrc, msgs), (wf, wh, wp, wm) in zip(got, want):
    assert (frame, hcrc, pcrc) == (wf, wh, wp), (frame, hcrc, pcrc)
    assert "Malformed" not in msgs, (frame, msgs)
    assert msgs.count("CRC mismatch") == (wm is not None), (frame, msgs)
    assert wm is None or wm in msgs, (frame, msgs)
print("dissector: a flipped header byte (DATA, ACK) and a flipped payload "
      "byte flagged, the untouched copy correct")
PY
[ $? = 0 ] || exit 1

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
