-- srd.lua: a Wireshark dissector for the SRD emulator's wire protocol
-- (docs/protocol.md, section 2), version 3, carried in UDP.
--
--   wireshark -X lua_script:tools/wireshark/srd.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/srd.lua -r capture.pcap -Y srd.type==2
--
-- or copy it to ~/.local/lib/wireshark/plugins/.  It decodes UDP port
-- 21316 (srd-loopback --pcap, srd_pcap.h) and srd-perf's default ports,
-- 18515-18530 (its base port and the server's paths above it, as tcpdump
-- sees them on a real link); for captures on another port use Decode
-- As... > SRD, or change the "UDP port" preference.  On other ports a
-- heuristic finds SRD by its header CRC, but Wireshark tries heuristics
-- only after the port table: a port another protocol owns (37008 is
-- TZSP's) decodes as that one unless heuristics go first,
--   tshark -o udp.try_heuristic_first:TRUE ...
-- as test/tools/test_perf.sh runs it on srd-perf's random loopback ports.
-- The UDP source port
-- is the path (entropy) the sender chose: 49152 + path in captures written
-- by this project.
--
-- Every field the engine checks is shown; a packet the engine would refuse
-- (bad version, type, lengths, reserved bits) gets an expert-info error
-- naming the reason, and a packet cut short by the capture's snap length is
-- decoded as far as it goes (a note when the header was cut; a payload cut
-- by the snap length, the usual case, only says how much was captured).  The header CRC (hcrc) is verified on every
-- packet whose header was captured, and a DATA packet's payload CRC (pcrc,
-- flag PCRC) wherever its whole payload was: srd.hcrc.status and
-- srd.pcrc.status say "Good", "Bad" or "Unverified", and a mismatch is an
-- expert-info error.

local srd = Proto("srd", "Scalable Reliable Datagram (emulated)")

local VERSION = 3
local COMMON_LEN = 20 -- srd_pkt.h SRD_PKT_COMMON_LEN
local HCRC_OFF = 16 -- SRD_PKT_HCRC_OFF
local ACK_BODY_LEN = 12 -- SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN

local TYPES = {
  [1] = "DATA", [2] = "ACK", [3] = "HS_REQ", [4] = "HS_RESP",
  [5] = "HS_CONFIRM", [6] = "SYNC",
}
local NACK_REASONS = {
  [1] = "RNR (receiver not ready)", [2] = "TRUNCATED",
  [3] = "DONE (message complete)", [4] = "HAVE (fragment received)",
}
local NACK_RNR, NACK_TRUNCATED, NACK_DONE, NACK_HAVE = 1, 2, 3, 4
-- CRC_STATUS follows Wireshark's own checksum status fields.
local CRC_BAD, CRC_GOOD, CRC_UNVERIFIED = 0, 1, 2
local CRC_STATUS = {
  [CRC_BAD] = "Bad", [CRC_GOOD] = "Good", [CRC_UNVERIFIED] = "Unverified",
}

local f = {
  version = ProtoField.uint8("srd.version", "Version"),
  type = ProtoField.uint8("srd.type", "Type", base.DEC, TYPES),
  flags = ProtoField.uint16("srd.flags", "Flags", base.HEX),
  flag_hs_echo = ProtoField.bool("srd.flags.hs_echo", "HS_ECHO", 16, nil,
                                 0x0001),
  flag_empty = ProtoField.bool("srd.flags.empty", "EMPTY", 16, nil, 0x0001),
  flag_ack = ProtoField.bool("srd.flags.ack", "ACK", 16, nil, 0x0002),
  flag_pcrc = ProtoField.bool("srd.flags.pcrc", "PCRC", 16, nil, 0x0004),
  piggy = ProtoField.none("srd.data.ack", "Acknowledgement"),
  src_conn = ProtoField.uint32("srd.src_conn", "Source incarnation",
                               base.HEX),
  dst_conn = ProtoField.uint32("srd.dst_conn", "Destination incarnation",
                               base.HEX),
  path = ProtoField.uint16("srd.path", "Path (entropy)"),
  reserved = ProtoField.bytes("srd.reserved", "Reserved"),
  hcrc = ProtoField.uint32("srd.hcrc", "Header CRC32C", base.HEX),
  hcrc_status = ProtoField.uint8("srd.hcrc.status", "Header CRC status",
                                 base.DEC, CRC_STATUS),
  -- DATA
  seq = ProtoField.uint32("srd.seq", "Packet number"),
  msg_id = ProtoField.uint32("srd.msg_id", "Message id"),
  msg_floor = ProtoField.uint32("srd.msg_floor", "Message floor"),
  msg_len = ProtoField.uint32("srd.msg_len", "Message length"),
  offset = ProtoField.uint32("srd.offset", "Fragment offset"),
  payload_len = ProtoField.uint16("srd.payload_len", "Payload length"),
  tx_count = ProtoField.uint8("srd.tx_count", "Transmission"),
  tx_ts = ProtoField.uint64("srd.tx_ts", "Send timestamp (ns)"),
  pcrc = ProtoField.uint32("srd.pcrc", "Payload CRC32C", base.HEX),
  pcrc_status = ProtoField.uint8("srd.pcrc.status", "Payload CRC status",
                                 base.DEC, CRC_STATUS),
  hs_echo = ProtoField.uint64("srd.hs_echo", "Handshake cookie echo",
                              base.HEX),
  payload = ProtoField.bytes("srd.payload", "Payload"),
  -- ACK
  largest = ProtoField.uint32("srd.ack.largest", "Largest received"),
  first_range = ProtoField.uint16("srd.ack.first_range", "First range"),
  n_ranges = ProtoField.uint8("srd.ack.n_ranges", "Gap/length pairs"),
  ranges = ProtoField.uint16("srd.ack.ranges", "Ranges"),
  n_echo = ProtoField.uint8("srd.ack.n_echo", "Echoes"),
  n_nack = ProtoField.uint8("srd.ack.n_nack", "NACKs"),
  range = ProtoField.none("srd.ack.range", "Range"),
  range_gap = ProtoField.uint16("srd.ack.range.gap", "Gap (missing)"),
  range_len = ProtoField.uint16("srd.ack.range.len", "Length (received)"),
  acked = ProtoField.string("srd.ack.acked", "Acknowledged"),
  echo = ProtoField.none("srd.ack.echo", "Echo"),
  echo_tx_ts = ProtoField.uint64("srd.ack.echo.tx_ts", "Send timestamp (ns)"),
  echo_seq = ProtoField.uint32("srd.ack.echo.seq", "Packet number"),
  echo_hold = ProtoField.uint32("srd.ack.echo.hold_ns",
                                "Held at the receiver (ns)"),
  echo_path = ProtoField.uint16("srd.ack.echo.path", "Path"),
  nack = ProtoField.none("srd.ack.nack", "NACK"),
  nack_seq = ProtoField.uint32("srd.ack.nack.seq", "Packet number"),
  nack_msg = ProtoField.uint32("srd.ack.nack.msg_id", "Message id"),
  nack_reason = ProtoField.uint8("srd.ack.nack.reason", "Reason", base.DEC,
                                 NACK_REASONS),
  nack_frag = ProtoField.uint24("srd.ack.nack.frag", "Fragment"),
  -- handshake and SYNC
  nonce = ProtoField.uint64("srd.hs.nonce", "Nonce", base.HEX),
  hs_echo_field = ProtoField.uint64("srd.hs.echo", "Echo", base.HEX),
  mtu = ProtoField.uint32("srd.hs.mtu", "MTU"),
  max_msg = ProtoField.uint32("srd.hs.max_msg_size", "Max message size"),
  msg_window = ProtoField.uint32("srd.hs.msg_window", "Message window"),
  padding = ProtoField.bytes("srd.hs.padding", "Padding"),
}
local fields = {}
for _, v in pairs(f) do
  fields[#fields + 1] = v
end
srd.fields = fields

local e_malformed = ProtoExpert.new("srd.malformed", "Malformed SRD packet",
                                    expert.group.MALFORMED,
                                    expert.severity.ERROR)
local e_truncated = ProtoExpert.new("srd.truncated",
                                    "Cut short by the capture's snap length",
                                    expert.group.UNDECODED,
                                    expert.severity.NOTE)
local e_retx = ProtoExpert.new("srd.retransmission", "Retransmission",
                               expert.group.SEQUENCE, expert.severity.NOTE)
local e_nack = ProtoExpert.new("srd.nack.expert", "NACK",
                               expert.group.RESPONSE_CODE,
                               expert.severity.WARN)
local e_notice = ProtoExpert.new("srd.nack.notice", "Delivery notice",
                                 expert.group.RESPONSE_CODE,
                                 expert.severity.CHAT)
local e_hcrc = ProtoExpert.new("srd.hcrc.bad", "Header CRC mismatch",
                               expert.group.CHECKSUM, expert.severity.ERROR)
local e_pcrc = ProtoExpert.new("srd.pcrc.bad", "Payload CRC mismatch",
                               expert.group.CHECKSUM, expert.severity.ERROR)
srd.experts = { e_malformed, e_truncated, e_retx, e_nack, e_notice, e_hcrc,
                e_pcrc }

srd.prefs.port = Pref.uint("UDP port", 21316, "UDP port of SRD packets")
srd.prefs.check_pcrc = Pref.bool("Verify the payload CRC", true,
                                 "Compute the CRC32C of every captured DATA " ..
                                 "payload that carries one (flag PCRC)")

-- CRC32C (Castagnoli, reflected polynomial 0x82F63B78, as in iSCSI and
-- srd_crc32c.h), one byte at a time through a 256-entry table.
local band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
local sbyte = string.byte
local CRC32C = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if band(c, 1) ~= 0 then
      c = bxor(rshift(c, 1), 0x82F63B78)
    else
      c = rshift(c, 1)
    end
  end
  CRC32C[i] = c
end

-- crc_update runs the CRC state |c| (not yet inverted at the end) over
-- |n| bytes of |tvb| from |off|.
local function crc_update(c, tvb, off, n)
  local step = 4096
  local pos = off
  while n > 0 do
    local k = math.min(n, step)
    local s = tvb:raw(pos, k)
    for i = 1, k do
      c = bxor(CRC32C[bxor(c % 256, sbyte(s, i))], rshift(c, 8))
    end
    pos, n = pos + k, n - k
  end
  return c
end

-- hcrc computes what srd_pkt_hcrc does: the CRC32C of the |span|-byte
-- header with its own four bytes left out.
local function hcrc(tvb, span)
  local c = crc_update(0xffffffff, tvb, 0, HCRC_OFF)
  c = crc_update(c, tvb, HCRC_OFF + 4, span - HCRC_OFF - 4)
  return bxor(c, 0xffffffff)
end

local FIXED_LEN = { [3] = 52, [4] = 52, [5] = 40, [6] = 28 }

-- header_span returns the length of the header (the bytes hcrc covers) as
-- srd_pkt_span computes it from the type, flags and counts, or nil when
-- the counts were not captured.
local function header_span(tvb, ptype, flags)
  local base
  if ptype == 1 then
    base = bit32.band(flags, 0x0001) ~= 0 and 76 or 56
    if bit32.band(flags, 0x0002) == 0 then
      return base
    end
  elseif ptype == 2 then
    base = COMMON_LEN
  else
    return FIXED_LEN[ptype]
  end
  if tvb:captured_len() < base + ACK_BODY_LEN then
    return nil
  end
  return base + ACK_BODY_LEN + 4 * tvb(base + 6, 1):uint() +
         20 * tvb(base + 7, 1):uint() + 12 * tvb(base + 8, 1):uint()
end

-- bad marks the packet malformed with |why| and returns false.
local function bad(tree, why)
  tree:add_proto_expert_info(e_malformed, why)
  return false
end

-- need checks that |n| bytes from |off| were captured; a packet the
-- capture cut short is decoded up to there.
local function need(tvb, tree, off, n)
  if tvb:captured_len() >= off + n then
    return true
  end
  if tvb:reported_len() >= off + n then
    tree:add_proto_expert_info(e_truncated)
  end
  return false
end

-- check_hcrc verifies the header CRC shown by |item|, adds its status,
-- and returns the status.  A header longer than the datagram is not
-- verified: the type's own checks call it malformed.
local function check_hcrc(tvb, tree, item, ptype, flags)
  local status = CRC_UNVERIFIED
  local span = header_span(tvb, ptype, flags)
  if tvb(0, 1):uint() ~= VERSION or TYPES[ptype] == nil then
    item:append_text(" [unverified]")
  elseif span == nil or span > tvb:captured_len() then
    item:append_text(" [unverified: header not captured]")
  elseif span > tvb:reported_len() then
    item:append_text(" [unverified: header longer than the packet]")
  else
    local want = hcrc(tvb, span)
    if want == tvb(HCRC_OFF, 4):uint() then
      status = CRC_GOOD
      item:append_text(" [correct]")
    else
      status = CRC_BAD
      item:append_text(string.format(" [incorrect, should be 0x%08x]", want))
      item:add_proto_expert_info(e_hcrc, string.format(
          "Header CRC mismatch: 0x%08x over %u bytes, should be 0x%08x",
          tvb(HCRC_OFF, 4):uint(), span, want))
    end
  end
  item:add(f.hcrc_status, status):set_generated()
  return status
end

-- ack_body decodes the fields of an acknowledgement that follow an ACK's
-- common header, at |base|: in an ACK packet, or riding on a DATA packet.
-- Returns ok, its length, and a summary for the Info column.
local function ack_body(tvb, tree, base, empty, max_r, max_e, max_n)
  if not need(tvb, tree, base, ACK_BODY_LEN) then
    return true, 0, ""
  end
  local largest = tvb(base, 4):uint()
  local first = tvb(base + 4, 2):uint()
  local nr, ne = tvb(base + 6, 1):uint(), tvb(base + 7, 1):uint()
  local nn = tvb(base + 8, 1):uint()
  tree:add(f.largest, tvb(base, 4))
  tree:add(f.first_range, tvb(base + 4, 2))
  tree:add(f.n_ranges, tvb(base + 6, 1))
  tree:add(f.n_echo, tvb(base + 7, 1))
  tree:add(f.n_nack, tvb(base + 8, 1))
  tree:add(f.reserved, tvb(base + 9, 3))
  if nr > max_r or ne > max_e or nn > max_n then
    return bad(tree, "too many ranges, echoes or NACKs"), 0, ""
  end
  local len = ACK_BODY_LEN + 4 * nr + 20 * ne + 12 * nn
  if tvb:reported_len() < base + len then
    return bad(tree, "shorter than its ranges, echoes and NACKs"), 0, ""
  end
  local info
  local pos = base + ACK_BODY_LEN
  if empty then
    info = "(empty)"
  else
    -- Ranges go down from |largest|: [largest - first, largest], then
    -- gap (missing) and length (received) pairs.
    local hi = largest
    local lo = (largest - first) % 4294967296
    local spans = { string.format("%u-%u", lo, hi) }
    for _ = 1, nr do
      if not need(tvb, tree, pos, 4) then
        break
      end
      local gap, l = tvb(pos, 2):uint(), tvb(pos + 2, 2):uint()
      hi = (lo - gap - 1) % 4294967296
      lo = (hi - l + 1) % 4294967296
      local r = tree:add(f.range, tvb(pos, 4))
      r:add(f.range_gap, tvb(pos, 2))
      r:add(f.range_len, tvb(pos + 2, 2))
      r:append_text(string.format(": %u-%u", lo, hi))
      spans[#spans + 1] = string.format("%u-%u", lo, hi)
      pos = pos + 4
    end
    tree:add(f.acked, table.concat(spans, " "))
    -- The first range and the pairs below it, as the Info column counts.
    tree:add(f.ranges, 1 + nr):set_generated()
    info = string.format("largest=%u ranges=%d", largest, 1 + nr)
  end
  pos = base + ACK_BODY_LEN + 4 * nr
  for _ = 1, ne do
    if not need(tvb, tree, pos, 20) then
      break
    end
    local e = tree:add(f.echo, tvb(pos, 20))
    e:add(f.echo_tx_ts, tvb(pos, 8))
    e:add(f.echo_seq, tvb(pos + 8, 4))
    e:add(f.echo_hold, tvb(pos + 12, 4))
    e:add(f.echo_path, tvb(pos + 16, 2))
    e:add(f.reserved, tvb(pos + 18, 2))
    e:append_text(string.format(": seq %u on path %u",
                                tvb(pos + 8, 4):uint(),
                                tvb(pos + 16, 2):uint()))
    pos = pos + 20
  end
  -- NACKs refuse a packet (RNR, TRUNCATED); DONE and HAVE are notices
  -- that a whole message, or fragment |frag| of it, is in.
  local refusals, notices, ok = 0, 0, true
  pos = base + ACK_BODY_LEN + 4 * nr + 20 * ne
  for _ = 1, nn do
    if not need(tvb, tree, pos, 12) then
      break
    end
    local reason = tvb(pos + 8, 1):uint()
    local frag = tvb(pos + 9, 3):uint()
    local n = tree:add(f.nack, tvb(pos, 12))
    n:add(f.nack_seq, tvb(pos, 4))
    n:add(f.nack_msg, tvb(pos + 4, 4))
    n:add(f.nack_reason, tvb(pos + 8, 1))
    n:add(f.nack_frag, tvb(pos + 9, 3))
    local why = NACK_REASONS[reason] or "unknown"
    if reason == NACK_HAVE then
      n:append_text(string.format(": HAVE msg %u fragment %u",
                                  tvb(pos + 4, 4):uint(), frag))
    elseif reason == NACK_DONE then
      n:append_text(string.format(": DONE msg %u", tvb(pos + 4, 4):uint()))
    else
      n:append_text(": " .. why)
    end
    if reason == NACK_DONE or reason == NACK_HAVE then
      n:add_proto_expert_info(e_notice, why)
      notices = notices + 1
    else
      n:add_proto_expert_info(e_nack, why)
      refusals = refusals + 1
    end
    if reason == 0 or reason > NACK_HAVE then
      ok = bad(n, "unknown NACK reason")
    elseif reason ~= NACK_HAVE and frag ~= 0 then
      ok = bad(n, "fragment set on a NACK other than HAVE")
    end
    pos = pos + 12
  end
  if ne > 0 then
    info = info .. string.format(" echoes=%d", ne)
  end
  if refusals > 0 then
    info = info .. string.format(" nacks=%d", refusals)
  end
  if notices > 0 then
    info = info .. string.format(" notices=%d", notices)
  end
  return ok, len, info
end

local function data(tvb, pinfo, tree, flags)
  local hdr = bit32.band(flags, 0x0001) ~= 0 and 76 or 56
  local has_pcrc = bit32.band(flags, 0x0004) ~= 0
  if bit32.band(flags, 0xfff8) ~= 0 then
    return bad(tree, "unknown DATA flags")
  end
  if tvb:reported_len() < hdr then
    return bad(tree, "shorter than the DATA header")
  end
  if not need(tvb, tree, 20, 36) then
    return true
  end
  local seq = tvb(20, 4):uint()
  local msg = tvb(24, 4):uint()
  local len = tvb(32, 4):uint()
  local off = tvb(36, 4):uint()
  local plen = tvb(40, 2):uint()
  local tries = tvb(42, 1):uint()
  local pcrc = tvb(52, 4):uint()
  tree:add(f.seq, tvb(20, 4))
  tree:add(f.msg_id, tvb(24, 4))
  tree:add(f.msg_floor, tvb(28, 4))
  tree:add(f.msg_len, tvb(32, 4))
  tree:add(f.offset, tvb(36, 4))
  tree:add(f.payload_len, tvb(40, 2))
  local tx = tree:add(f.tx_count, tvb(42, 1))
  tree:add(f.reserved, tvb(43, 1))
  tree:add(f.tx_ts, tvb(44, 8))
  local pt = tree:add(f.pcrc, tvb(52, 4))
  if hdr == 76 and need(tvb, tree, 56, 20) then
    -- The cookie, and the sender's request parameters for a responder
    -- that kept no state (docs/protocol.md, "Stateless responder").
    tree:add(f.hs_echo, tvb(56, 8))
    tree:add(f.mtu, tvb(64, 4))
    tree:add(f.max_msg, tvb(68, 4))
    tree:add(f.msg_window, tvb(72, 4))
  end
  pinfo.cols.info:set(string.format(
      "DATA seq=%u msg=%u %u-%u/%u", seq, msg, off, off + plen, len))
  if bit32.band(flags, 0x0002) ~= 0 then
    -- An acknowledgement rides on it, between header and payload.
    local at = tree:add(f.piggy, tvb(hdr, math.min(ACK_BODY_LEN,
                                                   tvb:reported_len() - hdr)))
    local ok, alen, ainfo = ack_body(tvb, at, hdr, false, 4, 4, 0)
    if not ok then
      return false
    end
    at:set_len(math.max(alen, 1))
    pinfo.cols.info:append(" +ACK " .. ainfo)
    hdr = hdr + alen
  end
  if tries > 1 then
    tx:add_proto_expert_info(e_retx, string.format("Try %u", tries))
    pinfo.cols.info:append(string.format(" try %u", tries))
  end
  if tvb(43, 1):uint() ~= 0 or tries == 0 then
    return bad(tree, "reserved byte set or zero transmission count")
  end
  if not has_pcrc and pcrc ~= 0 then
    return bad(tree, "payload CRC set without the PCRC flag")
  end
  if tvb:reported_len() ~= hdr + plen then
    return bad(tree, "datagram length is not header + payload_len")
  end
  if off + plen > len or (plen == 0) ~= (len == 0) then
    return bad(tree, "fragment outside its message")
  end
  local avail = math.max(0, math.min(plen, tvb:captured_len() - hdr))
  if plen > 0 then
    if avail > 0 then
      local it = tree:add(f.payload, tvb(hdr, avail))
      if avail < plen then
        it:append_text(string.format(" [%d of %d bytes captured]", avail, plen))
      end
    end
  end
  -- The payload CRC, where the whole payload was captured.
  if not has_pcrc then
    pt:append_text(" [not used]")
  elseif avail < plen then
    pt:append_text(" [unverified: payload not captured]")
    pt:add(f.pcrc_status, CRC_UNVERIFIED):set_generated()
  elseif not srd.prefs.check_pcrc then
    pt:append_text(" [unverified]")
    pt:add(f.pcrc_status, CRC_UNVERIFIED):set_generated()
  else
    local want = bxor(crc_update(0xffffffff, tvb, hdr, plen), 0xffffffff)
    if want == pcrc then
      pt:append_text(" [correct]")
      pt:add(f.pcrc_status, CRC_GOOD):set_generated()
    else
      pt:append_text(string.format(" [incorrect, should be 0x%08x]", want))
      pt:add(f.pcrc_status, CRC_BAD):set_generated()
      pt:add_proto_expert_info(e_pcrc, string.format(
          "Payload CRC mismatch: 0x%08x over %u bytes, should be 0x%08x",
          pcrc, plen, want))
      pinfo.cols.info:append(" [payload CRC mismatch]")
    end
  end
  return true
end

local function ack(tvb, pinfo, tree, flags)
  if bit32.band(flags, 0xfffe) ~= 0 then
    return bad(tree, "unknown ACK flags")
  end
  if tvb:reported_len() < COMMON_LEN + ACK_BODY_LEN then
    return bad(tree, "shorter than the ACK header")
  end
  local ok, len, info = ack_body(tvb, tree, COMMON_LEN,
                                 bit32.band(flags, 1) ~= 0, 32, 16, 8)
  if not ok then
    return false
  end
  if len > 0 and tvb:reported_len() ~= COMMON_LEN + len then
    return bad(tree, "length does not match the counts")
  end
  pinfo.cols.info:set("ACK " .. info)
  return true
end

local function hs(tvb, pinfo, tree, ptype, flags)
  local name = TYPES[ptype]
  if flags ~= 0 then
    return bad(tree, "flags set on a handshake packet")
  end
  if tvb:reported_len() ~= FIXED_LEN[ptype] then
    return bad(tree, "wrong length for " .. name)
  end
  local pos = COMMON_LEN
  if ptype ~= 3 then
    if not need(tvb, tree, pos, 8) then
      return true
    end
    tree:add(f.hs_echo_field, tvb(pos, 8))
    pos = pos + 8
  end
  if ptype ~= 5 then
    if not need(tvb, tree, pos, 24) then
      return true
    end
    tree:add(f.nonce, tvb(pos, 8))
    tree:add(f.mtu, tvb(pos + 8, 4))
    tree:add(f.max_msg, tvb(pos + 12, 4))
    tree:add(f.msg_window, tvb(pos + 16, 4))
    tree:add(f.reserved, tvb(pos + 20, 4))
    if ptype == 3 and need(tvb, tree, pos + 24, 8) then
      -- Padding: a request is as long as its answer (no amplification).
      tree:add(f.padding, tvb(pos + 24, 8))
    end
  else
    -- CONFIRM: the request's parameters again, for a stateless responder.
    if not need(tvb, tree, pos, 12) then
      return true
    end
    tree:add(f.mtu, tvb(pos, 4))
    tree:add(f.max_msg, tvb(pos + 4, 4))
    tree:add(f.msg_window, tvb(pos + 8, 4))
  end
  pinfo.cols.info:set(name)
  return true
end

local function sync(tvb, pinfo, tree, flags)
  if flags ~= 0 or tvb:reported_len() ~= FIXED_LEN[6] then
    return bad(tree, "malformed SYNC")
  end
  if need(tvb, tree, COMMON_LEN, 8) then
    tree:add(f.msg_floor, tvb(COMMON_LEN, 4))
    tree:add(f.reserved, tvb(COMMON_LEN + 4, 4))
    pinfo.cols.info:set(string.format("SYNC floor=%u",
                                      tvb(COMMON_LEN, 4):uint()))
  end
  return true
end

function srd.dissector(tvb, pinfo, root)
  pinfo.cols.protocol:set("SRD")
  local tree = root:add(srd, tvb())
  if tvb:reported_len() < COMMON_LEN then
    bad(tree, "shorter than the common header")
    return tvb:captured_len()
  end
  if not need(tvb, tree, 0, COMMON_LEN) then
    return tvb:captured_len()
  end
  local ptype = tvb(1, 1):uint()
  local flags = tvb(2, 2):uint()
  tree:add(f.version, tvb(0, 1))
  tree:add(f.type, tvb(1, 1))
  local ft = tree:add(f.flags, tvb(2, 2))
  if ptype == 1 then
    ft:add(f.flag_hs_echo, tvb(2, 2))
    ft:add(f.flag_ack, tvb(2, 2))
    ft:add(f.flag_pcrc, tvb(2, 2))
  elseif ptype == 2 then
    ft:add(f.flag_empty, tvb(2, 2))
  end
  tree:add(f.src_conn, tvb(4, 4))
  tree:add(f.dst_conn, tvb(8, 4))
  tree:add(f.path, tvb(12, 2))
  tree:add(f.reserved, tvb(14, 2))
  local ct = tree:add(f.hcrc, tvb(HCRC_OFF, 4))
  tree:append_text(string.format(", %s, path %u", TYPES[ptype] or "?",
                                 tvb(12, 2):uint()))
  -- As in the engine: the version and type first, then the header CRC,
  -- then every field.  A header that fails its CRC is still decoded, for
  -- a look at what was damaged, but the engine drops it.
  local crc = check_hcrc(tvb, tree, ct, ptype, flags)
  if tvb(0, 1):uint() ~= VERSION then
    bad(tree, "unknown version")
  elseif TYPES[ptype] == nil then
    bad(tree, "unknown type")
  elseif tvb(4, 4):uint() == 0 or tvb(12, 2):uint() >= 64 or
      tvb(14, 2):uint() ~= 0 then
    bad(tree, "zero source incarnation, path >= 64 or reserved bits set")
  elseif ptype == 1 then
    data(tvb, pinfo, tree, flags)
  elseif ptype == 2 then
    ack(tvb, pinfo, tree, flags)
  elseif ptype == 6 then
    sync(tvb, pinfo, tree, flags)
  else
    hs(tvb, pinfo, tree, ptype, flags)
  end
  if crc == CRC_BAD then
    pinfo.cols.info:append(" [header CRC mismatch]")
  end
  return tvb:captured_len()
end

local udp_port = DissectorTable.get("udp.port")
local registered = srd.prefs.port

function srd.prefs_changed()
  if registered ~= srd.prefs.port then
    udp_port:remove(registered, srd)
    registered = srd.prefs.port
    udp_port:add(registered, srd)
  end
end

udp_port:add(registered, srd)
-- srd-perf's base port and the 15 path ports above it (its defaults).
udp_port:add("18515-18530", srd)

-- On any other UDP port (srd-perf --loopback and --local-port pick their
-- own), a datagram is SRD when it passes what the engine checks first:
-- version 3, a known type, and a header CRC that matches (a chance of
-- 2^-32 for anything else).
local function heuristic(tvb, pinfo, root)
  if tvb:captured_len() < COMMON_LEN or tvb(0, 1):uint() ~= VERSION then
    return false
  end
  local ptype = tvb(1, 1):uint()
  if TYPES[ptype] == nil then
    return false
  end
  local span = header_span(tvb, ptype, tvb(2, 2):uint())
  if span == nil or span > tvb:captured_len() or span > tvb:reported_len() or
      hcrc(tvb, span) ~= tvb(HCRC_OFF, 4):uint() then
    return false
  end
  srd.dissector(tvb, pinfo, root)
  return true
end
srd:register_heuristic("udp", heuristic)
