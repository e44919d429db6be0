#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/fuzz/gen-corpus.py - write the seed corpora of the fuzz harnesses.

    tests/fuzz/gen-corpus.py [DIR]      (default: tests/fuzz/corpus)

Writes DIR/<harness>/<seed> in the input format each harness documents at
the top of tests/fuzz/fuzz_<harness>.c. Frames use the addresses of a fuzz
context (10.0.2.0/24, fd00::/64) and the host peers of tests/fuzz/fuzzenv.c
(TCP 8080, UDP 7, DNS). Checksums are left at zero and the seeds set the
harness's "fix checksums" bit (and, for TCP after the SYN, "fix numbers"),
so the harness, not this script, computes them with driver/stack/csum.c.
The output is committed; run this again after changing it.
"""

import os
import struct
import sys

GUEST_MAC = bytes.fromhex("021122334455")
GW_MAC = bytes.fromhex("52550a000202")
BCAST = b"\xff" * 6
GUEST4 = bytes([10, 0, 2, 100])
GW4 = bytes([10, 0, 2, 2])
DNS4 = bytes([10, 0, 2, 3])
GUEST6 = bytes.fromhex("fd000000000000000000000000000100")
GW6 = bytes.fromhex("fd000000000000000000000000000002")
LL6 = bytes.fromhex("fe80000000000000001122fffe334455")
ALLROUTERS6 = bytes.fromhex("ff020000000000000000000000000002")

FIX_CSUM = 2
FIX_TCP = 4
SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10


def eth(dst, etype, payload, src=GUEST_MAC):
    return dst + src + struct.pack("!H", etype) + payload


def ip4(proto, dst, payload, src=GUEST4, ident=1, frag=0, ttl=64):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                      frag, ttl, proto, 0, src, dst)
    return eth(GW_MAC, 0x0800, hdr + payload)


def ip6(nxt, dst, payload, src=GUEST6, hlim=64, dmac=GW_MAC):
    hdr = struct.pack("!IHBB16s16s", 0x60000000, len(payload), nxt, hlim,
                      src, dst)
    return eth(dmac, 0x86DD, hdr + payload)


def tcp(sport, dport, flags, data=b"", seq=1000, ack=0, win=65535, opts=b""):
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4,
                       flags, win, 0, 0) + opts + data


def udp(sport, dport, data):
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def icmp_echo(ident=1, seq=1, data=b"tapir ping", v6=False):
    return struct.pack("!BBHHH", 128 if v6 else 8, 0, 0, ident, seq) + data


def dns_query(name="example.com", qtype=1):
    q = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + q + \
        b"\0" + struct.pack("!HH", qtype, 1)


def dhcp(msgtype, extra=b""):
    bootp = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0,
                        0x3903F326, 0, 0x8000, b"\0" * 4, b"\0" * 4,
                        b"\0" * 4, b"\0" * 4, GUEST_MAC + b"\0" * 10,
                        b"\0" * 64, b"\0" * 128)
    opts = b"\x63\x82\x53\x63" + bytes([53, 1, msgtype]) + extra + b"\xff"
    return ip4(17, b"\xff" * 4, udp(68, 67, bootp + opts), src=b"\0" * 4)


def dhcp_frame(msgtype, extra=b""):
    f = dhcp(msgtype, extra)
    return BCAST + f[6:]


def ndp_rs():
    rs = struct.pack("!BBHI", 133, 0, 0, 0) + bytes([1, 1]) + GUEST_MAC
    return ip6(58, ALLROUTERS6, rs, src=LL6, hlim=255,
               dmac=bytes.fromhex("333300000002"))


def ndp_ns():
    ns = struct.pack("!BBHI", 135, 0, 0, 0) + GW6 + bytes([1, 1]) + GUEST_MAC
    return ip6(58, GW6, ns, src=GUEST6, hlim=255)


def arp_request():
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, GUEST_MAC,
                      GUEST4, b"\0" * 6, GW4)
    return eth(BCAST, 0x0806, arp)


def fragments():
    data = udp(4000, 7, bytes(range(256)) * 8)  # 2056 bytes
    first, rest = data[:1480], data[1480:]
    return [ip4(17, GW4, first, ident=77, frag=0x2000),
            ip4(17, GW4, rest, ident=77, frag=1480 // 8)]


def vnet(gso_type=0, hdr_len=0, gso_size=0, csum_start=0, csum_off=0,
         flags=0):
    # struct virtio_net_hdr (little-endian) and num_buffers: 12 bytes.
    return struct.pack("<BBHHHHH", flags, gso_type, hdr_len, gso_size,
                       csum_start, csum_off, 1)


def gso_tcp():
    seg = tcp(40000, 8080, ACK | PSH, b"x" * 3000, seq=1001, ack=1)
    frame = ip4(6, GW4, seg)
    return vnet(gso_type=1, hdr_len=54, gso_size=1448, csum_start=34,
                csum_off=16, flags=1) + frame


def syn(port=8080, sport=40000, v6=False):
    mss = b"\x02\x04\x05\xb4\x01\x03\x03\x07"
    seg = tcp(sport, port, SYN, seq=1000, opts=mss)
    return ip6(6, GW6, seg) if v6 else ip4(6, GW4, seg)


def seg(flags, data=b"", sport=40000, port=8080, win=65535):
    return ip4(6, GW4, tcp(sport, port, flags, data, win=win))


def write(base, harness, name, data):
    d = os.path.join(base, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def record(flags, frame):
    return struct.pack("!BH", flags, len(frame)) + frame


def step(index):
    """Flags bits 4-7: the fake-clock step before the frame."""
    return index << 4


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")

    frames = {
        "arp-request": arp_request(),
        "icmp-echo": ip4(1, GW4, icmp_echo()),
        "icmp6-echo": ip6(58, GW6, icmp_echo(v6=True)),
        "tcp-syn": syn(),
        "tcp6-syn": syn(v6=True),
        "tcp-data": seg(ACK | PSH, b"GET / HTTP/1.0\r\n\r\n"),
        "tcp-fin": seg(ACK | FIN),
        "tcp-rst": seg(RST),
        "udp-dns": ip4(17, DNS4, udp(5353, 53, dns_query())),
        "udp-echo": ip4(17, GW4, udp(4000, 7, b"hello")),
        "dhcp-discover": dhcp_frame(1),
        "ndp-rs": ndp_rs(),
        "ndp-ns": ndp_ns(),
        "frag-first": fragments()[0],
        "frag-last": fragments()[1],
    }
    for name, f in frames.items():
        write(base, "frame", name, bytes([FIX_CSUM]) + f)
    write(base, "frame", "vnet-gso-tcp", bytes([FIX_CSUM | 1]) + gso_tcp())
    write(base, "frame", "vnet-plain-udp",
          bytes([FIX_CSUM | 1]) + vnet() + frames["udp-echo"])

    fx = FIX_CSUM | FIX_TCP
    conv = {
        "tcp-handshake-data-fin": [
            (FIX_CSUM, syn()), (fx, seg(ACK)),
            (fx, seg(ACK | PSH, b"GET / HTTP/1.0\r\n\r\n")),
            (fx | step(3), seg(ACK)), (fx, seg(ACK | FIN)),
            (fx | step(5), seg(ACK))],
        "tcp-syn-retransmit": [
            (FIX_CSUM, syn(port=8080, sport=40001)),
            (FIX_CSUM | step(6), arp_request()),
            (FIX_CSUM | step(7), arp_request()),
            (FIX_CSUM | step(9), arp_request())],
        "tcp-zero-window": [
            (FIX_CSUM, syn(sport=40002)), (fx, seg(ACK, sport=40002, win=0)),
            (fx | step(4), seg(ACK, sport=40002, win=0)),
            (fx | step(6), seg(ACK, sport=40002, win=65535))],
        "tcp-idle": [
            (FIX_CSUM, syn(sport=40003)), (fx, seg(ACK, sport=40003)),
            (FIX_CSUM | step(15), arp_request())],
        "tcp-refused": [(FIX_CSUM, syn(port=8081, sport=40004))],
        "dhcp-dora": [
            (FIX_CSUM, dhcp_frame(1)),
            (FIX_CSUM, dhcp_frame(3, bytes([50, 4]) + GUEST4 +
                                  bytes([54, 4]) + GW4))],
        "dns-expire": [
            (FIX_CSUM, frames["udp-dns"]),
            (FIX_CSUM | step(9), frames["udp-echo"]),
            (FIX_CSUM | step(11), arp_request())],
        "fragments": [(FIX_CSUM, f) for f in fragments()],
        "fragment-timeout": [
            (FIX_CSUM, fragments()[0]),
            (FIX_CSUM | step(7), fragments()[1])],
        "ping-expire": [
            (FIX_CSUM, frames["icmp-echo"]),
            (FIX_CSUM | step(12), frames["icmp6-echo"])],
        "ndp": [(FIX_CSUM, ndp_rs()), (FIX_CSUM, ndp_ns()),
                (FIX_CSUM | step(10), ndp_rs())],
    }
    for name, recs in conv.items():
        write(base, "frames", name, b"".join(record(fl, f) for fl, f in recs))

    api = {
        "add-tcp": '{"execute":"add_hostfwd","arguments":{"proto":"tcp",'
                   '"host_addr":"127.0.0.1","host_port":18080,'
                   '"guest_addr":"10.0.2.100","guest_port":80}}',
        "add-udp6": '{"execute":"add_hostfwd","arguments":{"proto":"udp",'
                    '"host_addr":"::1","host_port":15353,"guest_port":53}}',
        "list": '{"execute":"list_hostfwd"}\n',
        "remove": '{"execute":"remove_hostfwd","arguments":{"id":1}}',
        "info": '{"execute":"get_info"}',
        "stats": '{"execute":"get_stats"}\n',
        "multiline": '{\n "execute": "list_hostfwd"\n}\n',
        "bom": '\ufeff{"execute":"get_info"}',
        "not-json": 'execute get_info\n',
    }
    for name, text in api.items():
        write(base, "api", name, b"\xff" + text.encode())
    write(base, "api", "trickle", b"\x02" + api["add-tcp"].encode())

    tap = ('{"version":1,"type":"tap","ifname":"tap0","ifindex":3,'
           '"mtu":1500,"txqueuelen":4000,"mac":"52:54:00:12:34:56",'
           '"addresses":[{"family":"inet","address":"10.0.2.100",'
           '"prefixlen":24},{"family":"inet6","address":"fd00::64",'
           '"prefixlen":64}],"offloads":{"vnet_hdr":true,"vnet_hdr_len":12,'
           '"flags":["csum","tso4","tso6","uso4","uso6"]},"queues":1}')
    err = ('{"version":1,"type":"error","error":{"errno":2,'
           '"op":"setns /proc/42/ns/net","text":"No such file or directory"}}')
    write(base, "ipc", "tap-1fd", b"\x01" + tap.encode())
    write(base, "ipc", "tap-0fd", b"\x00" + tap.encode())
    write(base, "ipc", "error", b"\x00" + err.encode())
    body = tap.encode()
    write(base, "ipc", "raw-framed", b"\x04" + struct.pack("!I", len(body)) +
          body)
    write(base, "ipc", "raw-short", b"\x04\x00\x00\x01\x00{")

    cli = {
        "attach": (0, ["--configure", "--mtu=65520", "--enable-ipv6",
                       "--api-socket", "/tmp/tapir-fuzz.sock", "1234",
                       "tap0"]),
        "attach-path": (0, ["-c", "--netns-type=path", "--cidr",
                            "10.1.0.0/24", "--macaddress",
                            "02:00:00:00:00:01", "/proc/self/ns/net",
                            "tap1"]),
        "attach-slirp": (0, ["--disable-host-loopback", "--outbound-addr",
                             "127.0.0.1", "--outbound-addr6", "lo",
                             "--exit-fd=3", "--ready-fd=4", "42", "tap0"]),
        "run": (1, ["-p", "8080:80", "--publish", "127.0.0.1:5353:53/udp",
                    "--queues", "2", "--offload", "off", "--", "true"]),
        "run-modes": (1, ["--forward-mode=splice", "--txqueuelen", "2000",
                          "--no-sandbox", "--no-seccomp", "--pcap",
                          "/tmp/x.pcap", "--debug", "sh", "-c", "exit"]),
        "run-ipv6": (1, ["-6", "-p", "[::1]:8080:80", "--publish",
                         "[fd00::1]:5353:53/udp", "-p", "8443:443", "--",
                         "true"]),
        "help": (0, ["--help"]),
        "version": (1, ["-v"]),
        "bad": (0, ["-6cm"]),
        # Mode bit 1: pasta port specs of one option.
        "pasta-podman": (2, ["127.0.0.1/8080-8080:80-80",
                             "8081-8081:80-80", "::1/9000"]),
        "pasta-manual": (2, ["192.0.2.1%eth0/20-30,~25",
                             "2000-5000:12000-15000,~3000-3010"]),
        "pasta-keyword": (2, ["none", "auto"]),
        # Mode bit 2: pasta command lines.
        "pasta-rootlesskit": (4, ["--foreground", "--stderr",
                                  "--ns-ifname=tap0", "--mtu=65520",
                                  "--no-dhcp", "--no-ra",
                                  "--address=10.0.2.100", "--netmask=24",
                                  "--gateway=10.0.2.2",
                                  "--dns-forward=10.0.2.3", "--no-map-gw",
                                  "--ipv4-only", "--tcp-ports=none",
                                  "--udp-ports=none", "4242"]),
        "pasta-podman": (4, ["--config-net", "-t",
                             "127.0.0.1/8080-8080:80-80", "--dns-forward",
                             "169.254.1.1", "-u", "none", "-T", "none",
                             "-U", "none", "--no-map-gw", "--quiet",
                             "--netns", "/run/n", "--map-guest-addr",
                             "169.254.1.2"]),
        "pasta-ipv6": (4, ["--config-net", "--ipv6-only", "-t",
                           "[::1]%lo/8080,fd00::5%eth0/9000-9010", "-T",
                           "8081", "-U", "auto", "--", "true"]),
        "pasta-command": (4, ["-a", "10.0.2.100", "-n", "255.255.255.0",
                              "-g", "10.0.2.2", "-6", "--", "sh", "-c",
                              "true"]),
    }
    for name, (mode, args) in cli.items():
        write(base, "cli", name,
              bytes([mode]) + b"\0".join(a.encode() for a in args))


if __name__ == "__main__":
    main()
