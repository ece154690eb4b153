"""Test frames for the interop tests, sent and captured with scapy inside host network namespaces.

Run inside a namespace (``ip netns exec NS python frames.py ...``):

* ``send IFACE SRC_MAC DST_MAC KIND:MARKER[,KIND:MARKER...] [GAP_S]``: send one frame per item, ``GAP_S`` apart
  (default 0.05 s); prints ``sent N``.
* ``sniff IFACE TIMEOUT PREFIX SRC_MAC END_MARKER``: capture (prints ``ready`` once the capture socket is open) until
  the frame carrying ``END_MARKER`` arrives or ``TIMEOUT`` s pass, then print one JSON list:
  ``[{"marker", "tags": [[tpid, vid, pcp], ...] outermost first, "len", "dst"}]`` of the frames from ``SRC_MAC``
  whose payload holds a marker starting with ``PREFIX`` (the receiver's own frames, e.g. an ICMP error quoting the
  marker, are not counted).

The sender sends ``END_MARKER`` last, as an untagged broadcast (the fence, :func:`fence`): every switch on the path
(OVS's userspace datapath, its upcalls handled in the thread that reads the port) forwards the frames of one port in
order, so once the fence arrives every earlier frame has been delivered or dropped. A capture of a fixed duration
lost the last frames under CPU load: the sender's scapy import (1.3 s) and one ``sendp`` per frame (about 25 ms on
top of the gap) outlasted the window while the lab switch had forwarded every frame (its port counters said so).

Kinds (:data:`KINDS`): ``unicast`` (IPv4/UDP to DST_MAC), ``broadcast``, ``multicast`` (01:00:5e:00:00:fb),
``tagged`` (802.1Q VID 5), ``tagged100`` (802.1Q VID 100), ``priority`` (802.1Q VID 0, PCP 5: priority-tagged),
``double`` (S-tag 0x8100 VID 100 + C-tag VID 5), ``qinq`` (S-tag 0x88a8 VID 100 + C-tag VID 5), ``lldp``
(01:80:c2:00:00:0e, ethertype 0x88cc), ``bddp`` (broadcast, ethertype 0x8942, the OSHI probe), ``jumbo``
(IPv4/UDP unicast, IP length 9000).
"""
from __future__ import annotations

import json
import sys
import time

KINDS = ("unicast", "broadcast", "multicast", "tagged", "tagged100", "priority", "double", "qinq", "lldp", "bddp",
         "jumbo")
JUMBO_IP_LEN = 9000     # bytes of the IPv4 packet; the Ethernet frame is 9014 B (+4 per tag)


def build(kind: str, marker: str, src: str, dst: str):
    """The scapy frame of ``kind`` carrying ``marker`` (ASCII) in its payload."""
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, Raw
    m = marker.encode()
    ip = IP(src="198.18.0.7", dst="198.18.0.8") / UDP(sport=40000, dport=9) / Raw(m.ljust(32, b"."))
    bc = IP(src="198.18.0.7", dst="198.18.0.255") / UDP(sport=40000, dport=9) / Raw(m.ljust(32, b"."))
    if kind == "unicast":
        return Ether(src=src, dst=dst) / ip
    if kind == "broadcast":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / bc
    if kind == "multicast":
        return Ether(src=src, dst="01:00:5e:00:00:fb") / IP(src="198.18.0.7", dst="224.0.0.251") / \
            UDP(sport=5353, dport=5353) / Raw(m.ljust(32, b"."))
    if kind == "tagged":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=5) / bc
    if kind == "tagged100":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=100) / bc
    if kind == "priority":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=0, prio=5) / bc
    if kind == "double":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=100) / Dot1Q(vlan=5) / bc
    if kind == "qinq":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff", type=0x88A8) / Dot1AD(vlan=100) / Dot1Q(vlan=5) / bc
    if kind == "lldp":
        return Ether(src=src, dst="01:80:c2:00:00:0e", type=0x88CC) / Raw(m.ljust(46, b"."))
    if kind == "bddp":
        return Ether(src=src, dst="ff:ff:ff:ff:ff:ff", type=0x8942) / Raw(m.ljust(46, b"."))
    if kind == "jumbo":
        pad = JUMBO_IP_LEN - 20 - 8
        return Ether(src=src, dst=dst) / IP(src="198.18.0.7", dst="198.18.0.8") / UDP(sport=40000, dport=9) / \
            Raw(m.ljust(pad, b"."))
    raise ValueError(f"unknown frame kind {kind!r}")


def fence(prefix: str) -> tuple[str, str]:
    """The last item to send after frames marked ``PREFIX...``: ``(kind, END_MARKER)`` for ``sniff``."""
    return "broadcast", f"{prefix}end"


def marker_of(raw: bytes, prefix: bytes) -> str:
    """The marker starting with ``prefix`` in a frame's bytes (markers are padded with ``.``)."""
    return raw[raw.find(prefix):].split(b".", 1)[0].decode(errors="replace")


def tags(pkt) -> list[list[int]]:
    """802.1Q/802.1ad headers of a captured frame, outermost first: ``[[tpid, vid, pcp], ...]``."""
    from scapy.all import Dot1AD, Dot1Q
    out = []
    layer = pkt
    tpid = pkt.type if hasattr(pkt, "type") else None
    while True:
        layer = layer.payload
        if isinstance(layer, (Dot1Q, Dot1AD)):
            out.append([tpid, layer.vlan, layer.prio])
            tpid = layer.type
        else:
            return out


def main(argv: list[str]) -> int:
    from scapy.all import conf, sendp, sniff
    conf.verb = 0
    if argv[0] == "send":
        iface, src, dst, items = argv[1], argv[2], argv[3], argv[4].split(",")
        gap = float(argv[5]) if len(argv) > 5 else 0.05
        for it in items:
            kind, marker = it.split(":", 1)
            sendp(build(kind, marker, src, dst), iface=iface)
            time.sleep(gap)                 # the pacing under test: frames GAP_S apart
        print(f"sent {len(items)}", flush=True)
        return 0
    if argv[0] == "sniff":
        iface, timeout, prefix, src, end = argv[1], float(argv[2]), argv[3].encode(), argv[4].lower(), argv[5]
        got = sniff(iface=iface, store=True, timeout=timeout,
                    lfilter=lambda p: p.src == src and prefix in bytes(p),
                    stop_filter=lambda p: marker_of(bytes(p), prefix) == end,
                    started_callback=lambda: print("ready", flush=True))
        out = []
        for p in got:
            raw = bytes(p)
            out.append({"marker": marker_of(raw, prefix), "tags": tags(p), "len": len(raw), "dst": p.dst})
        print(json.dumps(out), flush=True)
        return 0
    raise SystemExit(f"usage: {__doc__}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
