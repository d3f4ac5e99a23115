-- srd.lua: a Wireshark dissector for the SRD emulator's wire protocol
-- (docs/protocol.md, section 2), carried in UDP.
--
--   wireshark -X lua_script:tools/wireshark/srd.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/srd.lua -r capture.pcap -Y srd.type==2
--
-- or copy it to ~/.local/lib/wireshark/plugins/.  It decodes UDP port
-- 21316 (srd-loopback --pcap, srd_pcap.h); for captures on another port use
-- Decode As... > SRD, or change the "UDP port" preference.  The UDP source
-- port is the path (entropy) the sender chose: 49152 + path in captures
-- written by this project.
--
-- Every field the engine checks is shown; a packet the engine would refuse
-- (bad version, type, lengths, reserved bits) gets an expert-info error
-- naming the reason, and a packet cut short by the capture's snap length is
-- decoded as far as it goes.

local srd = Proto("srd", "Scalable Reliable Datagram (emulated)")

local TYPES = {
  [1] = "DATA", [2] = "ACK", [3] = "HS_REQ", [4] = "HS_RESP",
  [5] = "HS_CONFIRM", [6] = "SYNC",
}
local NACK_REASONS = { [1] = "RNR (receiver not ready)", [2] = "TRUNCATED" }

local f = {
  version = ProtoField.uint8("srd.version", "Version"),
  type = ProtoField.uint8("srd.type", "Type", base.DEC, TYPES),
  flags = ProtoField.uint16("srd.flags", "Flags", base.HEX),
  flag_hs_echo = ProtoField.bool("srd.flags.hs_echo", "HS_ECHO", 16, nil,
                                 0x0001),
  flag_empty = ProtoField.bool("srd.flags.empty", "EMPTY", 16, nil, 0x0001),
  flag_ack = ProtoField.bool("srd.flags.ack", "ACK", 16, nil, 0x0002),
  piggy = ProtoField.none("srd.data.ack", "Acknowledgement"),
  src_conn = ProtoField.uint32("srd.src_conn", "Source incarnation",
                               base.HEX),
  dst_conn = ProtoField.uint32("srd.dst_conn", "Destination incarnation",
                               base.HEX),
  path = ProtoField.uint16("srd.path", "Path (entropy)"),
  reserved = ProtoField.bytes("srd.reserved", "Reserved"),
  -- DATA
  seq = ProtoField.uint32("srd.seq", "Packet number"),
  msg_id = ProtoField.uint32("srd.msg_id", "Message id"),
  msg_floor = ProtoField.uint32("srd.msg_floor", "Message floor"),
  msg_len = ProtoField.uint32("srd.msg_len", "Message length"),
  offset = ProtoField.uint32("srd.offset", "Fragment offset"),
  payload_len = ProtoField.uint16("srd.payload_len", "Payload length"),
  tx_count = ProtoField.uint8("srd.tx_count", "Transmission"),
  tx_ts = ProtoField.uint64("srd.tx_ts", "Send timestamp (ns)"),
  hs_echo = ProtoField.uint64("srd.hs_echo", "Handshake cookie echo",
                              base.HEX),
  payload = ProtoField.bytes("srd.payload", "Payload"),
  -- ACK
  largest = ProtoField.uint32("srd.ack.largest", "Largest received"),
  first_range = ProtoField.uint16("srd.ack.first_range", "First range"),
  n_ranges = ProtoField.uint8("srd.ack.n_ranges", "Ranges"),
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
  -- handshake and SYNC
  nonce = ProtoField.uint64("srd.hs.nonce", "Nonce", base.HEX),
  hs_echo_field = ProtoField.uint64("srd.hs.echo", "Echo", base.HEX),
  mtu = ProtoField.uint32("srd.hs.mtu", "MTU"),
  max_msg = ProtoField.uint32("srd.hs.max_msg_size", "Max message size"),
  msg_window = ProtoField.uint32("srd.hs.msg_window", "Message window"),
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
srd.experts = { e_malformed, e_truncated, e_retx, e_nack }

srd.prefs.port = Pref.uint("UDP port", 21316, "UDP port of SRD packets")

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

-- ack_body decodes the fields of an acknowledgement that follow an ACK's
-- common header, at |base|: in an ACK packet, or riding on a DATA packet.
-- Returns ok, its length, and a summary for the Info column.
local function ack_body(tvb, tree, base, empty, max_r, max_e, max_n)
  if not need(tvb, tree, base, 12) then
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
  local len = 12 + 4 * nr + 20 * ne + 12 * nn
  if tvb:reported_len() < base + len then
    return bad(tree, "shorter than its ranges, echoes and NACKs"), 0, ""
  end
  local info
  local pos = base + 12
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
    info = string.format("largest=%u ranges=%d", largest, 1 + nr)
  end
  pos = base + 12 + 4 * nr
  for _ = 1, ne do
    if not need(tvb, tree, pos, 20) then
      break
    end
    local e = tree:add(f.echo, tvb(pos, 20))
    e:add(f.echo_tx_ts, tvb(pos, 8))
    e:add(f.echo_seq, tvb(pos + 8, 4))
    e:add(f.echo_hold, tvb(pos + 12, 4))
    e:add(f.echo_path, tvb(pos + 16, 2))
    e:append_text(string.format(": seq %u on path %u",
                                tvb(pos + 8, 4):uint(),
                                tvb(pos + 16, 2):uint()))
    pos = pos + 20
  end
  pos = base + 12 + 4 * nr + 20 * ne
  for _ = 1, nn do
    if not need(tvb, tree, pos, 12) then
      break
    end
    local n = tree:add(f.nack, tvb(pos, 12))
    n:add(f.nack_seq, tvb(pos, 4))
    n:add(f.nack_msg, tvb(pos + 4, 4))
    n:add(f.nack_reason, tvb(pos + 8, 1))
    local why = NACK_REASONS[tvb(pos + 8, 1):uint()] or "unknown"
    n:append_text(": " .. why)
    n:add_proto_expert_info(e_nack, why)
    pos = pos + 12
  end
  if ne > 0 then
    info = info .. string.format(" echoes=%d", ne)
  end
  if nn > 0 then
    info = info .. string.format(" nacks=%d", nn)
  end
  return true, len, info
end

local function data(tvb, pinfo, tree, flags)
  local hdr = bit32.band(flags, 0x0001) ~= 0 and 56 or 48
  if bit32.band(flags, 0xfffc) ~= 0 then
    return bad(tree, "unknown DATA flags")
  end
  if tvb:reported_len() < hdr then
    return bad(tree, "shorter than the DATA header")
  end
  if not need(tvb, tree, 16, 32) then
    return true
  end
  local seq = tvb(16, 4):uint()
  local msg = tvb(20, 4):uint()
  local len = tvb(28, 4):uint()
  local off = tvb(32, 4):uint()
  local plen = tvb(36, 2):uint()
  local tries = tvb(38, 1):uint()
  tree:add(f.seq, tvb(16, 4))
  tree:add(f.msg_id, tvb(20, 4))
  tree:add(f.msg_floor, tvb(24, 4))
  tree:add(f.msg_len, tvb(28, 4))
  tree:add(f.offset, tvb(32, 4))
  tree:add(f.payload_len, tvb(36, 2))
  local tx = tree:add(f.tx_count, tvb(38, 1))
  tree:add(f.reserved, tvb(39, 1))
  tree:add(f.tx_ts, tvb(40, 8))
  if hdr == 56 and need(tvb, tree, 48, 8) then
    tree:add(f.hs_echo, tvb(48, 8))
  end
  pinfo.cols.info:set(string.format(
      "DATA seq=%u msg=%u %u-%u/%u", seq, msg, off, off + plen, len))
  if bit32.band(flags, 0x0002) ~= 0 then
    -- An acknowledgement rides on it, between header and payload.
    local at = tree:add(f.piggy, tvb(hdr, math.min(12, tvb:reported_len() -
                                                         hdr)))
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
  if tvb(39, 1):uint() ~= 0 or tries == 0 then
    return bad(tree, "reserved byte set or zero transmission count")
  end
  if tvb:reported_len() ~= hdr + plen then
    return bad(tree, "datagram length is not header + payload_len")
  end
  if off + plen > len or (plen == 0) ~= (len == 0) then
    return bad(tree, "fragment outside its message")
  end
  if plen > 0 then
    local avail = math.min(plen, tvb:captured_len() - hdr)
    if avail > 0 then
      tree:add(f.payload, tvb(hdr, avail))
    end
    if avail < plen then
      tree:add_proto_expert_info(e_truncated)
    end
  end
  return true
end

local function ack(tvb, pinfo, tree, flags)
  if bit32.band(flags, 0xfffe) ~= 0 then
    return bad(tree, "unknown ACK flags")
  end
  if tvb:reported_len() < 28 then
    return bad(tree, "shorter than the ACK header")
  end
  local ok, len, info = ack_body(tvb, tree, 16, bit32.band(flags, 1) ~= 0,
                                 32, 16, 8)
  if not ok then
    return false
  end
  if len > 0 and tvb:reported_len() ~= 16 + len then
    return bad(tree, "length does not match the counts")
  end
  pinfo.cols.info:set("ACK " .. info)
  return true
end

local HS_LEN = { [3] = 40, [4] = 48, [5] = 24 }

local function hs(tvb, pinfo, tree, ptype, flags)
  local name = TYPES[ptype]
  if flags ~= 0 then
    return bad(tree, "flags set on a handshake packet")
  end
  if tvb:reported_len() ~= HS_LEN[ptype] then
    return bad(tree, "wrong length for " .. name)
  end
  local pos = 16
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
  end
  pinfo.cols.info:set(name)
  return true
end

local function sync(tvb, pinfo, tree, flags)
  if flags ~= 0 or tvb:reported_len() ~= 24 then
    return bad(tree, "malformed SYNC")
  end
  if need(tvb, tree, 16, 8) then
    tree:add(f.msg_floor, tvb(16, 4))
    tree:add(f.reserved, tvb(20, 4))
    pinfo.cols.info:set(string.format("SYNC floor=%u", tvb(16, 4):uint()))
  end
  return true
end

function srd.dissector(tvb, pinfo, root)
  pinfo.cols.protocol:set("SRD")
  local tree = root:add(srd, tvb())
  if tvb:reported_len() < 16 then
    bad(tree, "shorter than the common header")
    return tvb:captured_len()
  end
  if not need(tvb, tree, 0, 16) then
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
  elseif ptype == 2 then
    ft:add(f.flag_empty, tvb(2, 2))
  end
  tree:add(f.src_conn, tvb(4, 4))
  tree:add(f.dst_conn, tvb(8, 4))
  tree:add(f.path, tvb(12, 2))
  tree:add(f.reserved, tvb(14, 2))
  tree:append_text(string.format(", %s, path %u", TYPES[ptype] or "?",
                                 tvb(12, 2):uint()))
  if tvb(0, 1):uint() ~= 1 then
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
