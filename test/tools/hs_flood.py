#!/usr/bin/env python3
"""hs_flood.py: a bounded flood of well-formed SRD handshake requests
(wire version 3, HS_REQ, padded to 52 bytes, header CRC32C right) for
test_hs_flood.sh.

  hs_flood.py DST PORT COUNT SECONDS RATE SPOOF_NET REAL_ADDRS...

Sends at most COUNT requests and for at most SECONDS, at RATE a second
(0: as fast as it can),
until SIGTERM (the test ends it once its client is done; it then exits 0),
in turn: from a raw socket with a forged source address in SPOOF_NET
(a /N network, random host and port), and from UDP sockets bound to each
of REAL_ADDRS (64 ports each), so that every request comes from an
address the server has not seen.  Prints "sent N bytes B seconds S".
"""
import random
import signal
import socket
import struct
import sys
import time
import ipaddress


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TAB = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TAB[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def hs_req(src_conn, nonce):
    body = struct.pack("!QIII", nonce, 8192, 1 << 20, 1024) + bytes(12)
    head = struct.pack("!BBHIIHH", 3, 3, 0, src_conn, 0, 0, 0)
    crc = crc32c(head + body)
    return head + struct.pack("!I", crc) + body


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main():
    dst, port, count, secs = sys.argv[1], int(sys.argv[2]), int(
        sys.argv[3]), float(sys.argv[4])
    rate = float(sys.argv[5])
    net = ipaddress.ip_network(sys.argv[6])
    reals = sys.argv[7:]
    rng = random.Random(12)
    reqs = [hs_req(rng.randrange(1, 1 << 32), rng.randrange(1, 1 << 64))
            for _ in range(256)]
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    socks = []
    for a in reals:
        for _ in range(64):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((a, 0))
            s.setblocking(False)
            socks.append(s)
    dstb = socket.inet_aton(dst)
    hosts = int(net.num_addresses) - 2
    base = int(net.network_address) + 1
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sent = nbytes = 0
    t0 = time.monotonic()
    end = t0 + secs
    i = 0
    while not stop and sent < count and time.monotonic() < end:
        if rate > 0 and sent % 64 == 0:
            ahead = t0 + sent / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        req = reqs[i % len(reqs)]
        if socks and i % 4 == 3:
            try:
                socks[(i // 4) % len(socks)].sendto(req, (dst, port))
            except BlockingIOError:
                i += 1
                continue
        else:
            src = struct.pack("!I", base + rng.randrange(hosts))
            sport = rng.randrange(1024, 65536)
            udp = struct.pack("!HHHH", sport, port, 8 + len(req), 0)
            pseudo = src + dstb + struct.pack("!BBH", 0, 17, 8 + len(req))
            c = csum(pseudo + udp + req) or 0xFFFF
            udp = udp[:6] + struct.pack("!H", c)
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(req), i & 0xFFFF,
                             0, 64, 17, 0, src, dstb)
            raw.sendto(ip + udp + req, (dst, 0))
        sent += 1
        nbytes += len(req)
        i += 1
    print("sent %d bytes %d seconds %.2f" % (sent, nbytes,
                                              time.monotonic() - t0))


if __name__ == "__main__":
    main()
