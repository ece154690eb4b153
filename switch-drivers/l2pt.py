"""Link-local protocols a legacy switch can tunnel through a VLAN (Layer 2 protocol tunnelling, L2PT): the table
every part of HARMLESS shares (inventory names, driver keywords, the translator's rewrite flows, the lab's data plane).

An 802.1D/Q bridge consumes frames to the IEEE 802.1 reserved group addresses 01:80:c2:00:00:00-0f (and a Catalyst
those to Cisco's 01:00:0c:cc:cc:cc/cd), so LLDP, STP, LACP, CDP, ... never cross a legacy switch. With L2PT on an
access (or dot1q-tunnel) port, Cisco IOS and Junos rewrite the destination MAC of such a PDU to the well-known
tunnel MAC :data:`TUNNEL_MAC` on ingress and flood it in the port's VLAN; a tunnel port that sends it out restores
the original address (Cisco Catalyst 3750-X/3560-X Software Configuration Guide, "Configuring Layer 2 Protocol
Tunneling": "overwrites the customer PDU-destination MAC address with a well-known Cisco proprietary multicast
address (01-00-0c-cd-cd-d0)"; Junos "Layer 2 Protocol Tunneling (L2PT)", How L2PT works). Only the destination MAC
changes: the source MAC, the EtherType or 802.3 length + LLC/SNAP header and the payload stay, and that is how the
egress switch tells the protocols apart. Arista EOS does not rewrite: its L2 protocol forwarding bridges the PDU as
data with its own destination MAC (EOS User Manual, "Layer 2 Protocol Forwarding").

HARMLESS's translator undoes the rewrite on br-otc (:mod:`harmless.otc.flows`). Open vSwitch matches EtherTypes but
not LLC/SNAP headers: every 802.3 (length + LLC) frame has ``dl_type=0x05ff`` in OVS (ovs-fields(7), ``dl_type``:
"0x05ff ... frames that have no Ethernet type"), so among the LLC protocols the translator can restore only one
destination per port (:func:`restore_groups`).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LLC", "PROTOCOLS", "TUNNEL_MAC", "L2Protocol", "restore_groups", "tunnel_dsts"]

#: Cisco's well-known L2PT multicast address (also Junos's: "the predefined multicast tunnel MAC address of
#: 01:00:0c:cd:cd:d0"); not an IEEE reserved address, so every bridge floods it like any multicast.
TUNNEL_MAC = "01:00:0c:cd:cd:d0"
#: OVS's ``dl_type`` of an IEEE 802.3 frame with a length instead of an EtherType (LLC, or SNAP with a non-zero
#: OUI such as Cisco's 00000c): "OFP_DL_TYPE_NOT_ETH_TYPE" in OVS ``include/openflow/openflow-1.0.h``.
LLC = 0x05FF


@dataclass(frozen=True)
class L2Protocol:
    """One link-local protocol HARMLESS can have tunnelled.

    Attributes:
        name: the inventory's name (``l2pt: [lldp]``) and the IOS/Junos keyword.
        dsts: the destination MACs its PDUs use, the usual one first (the one restored on the way in).
        eth_type: its EtherType, or :data:`LLC` for 802.3 length + LLC/SNAP frames.
        point_to_point: Cisco tunnels it only as ``l2protocol-tunnel point-to-point`` (LACP, PAgP, UDLD: for an
            emulated point-to-point link; Catalyst configuration guides, caution "PAgP, LACP, and UDLD protocol
            tunneling is only intended to emulate a point-to-point topology").
        source: where the addresses come from.
    """

    name: str
    dsts: tuple[str, ...]
    eth_type: int
    point_to_point: bool = False
    source: str = ""

    @property
    def dst(self) -> str:
        """The destination MAC restored on a tunnelled PDU coming in (the first of :attr:`dsts`)."""
        return self.dsts[0]


#: every protocol by inventory name, in the order HARMLESS renders them
PROTOCOLS: dict[str, L2Protocol] = {p.name: p for p in (
    L2Protocol("lldp", ("01:80:c2:00:00:0e",), 0x88CC,
               source="IEEE 802.1AB-2016 Table 7-1 (nearest bridge group address), EtherType 0x88cc"),
    L2Protocol("stp", ("01:80:c2:00:00:00", "01:00:0c:cc:cc:cd"), LLC,
               source="IEEE 802.1D-2004 7.12.3 (bridge group address, LLC 0x42); Cisco PVST+ (SNAP 00000c/010b)"),
    L2Protocol("cdp", ("01:00:0c:cc:cc:cc",), LLC, source="Cisco CDP: SNAP OUI 00000c, PID 0x2000"),
    L2Protocol("vtp", ("01:00:0c:cc:cc:cc",), LLC, source="Cisco VTP: SNAP OUI 00000c, PID 0x2003"),
    L2Protocol("lacp", ("01:80:c2:00:00:02",), 0x8809, True,
               source="IEEE 802.3 Annex 57A (Slow Protocols multicast address, EtherType 0x8809)"),
    L2Protocol("pagp", ("01:00:0c:cc:cc:cc",), LLC, True, source="Cisco PAgP: SNAP OUI 00000c, PID 0x0104"),
    L2Protocol("udld", ("01:00:0c:cc:cc:cc",), LLC, True, source="Cisco UDLD: SNAP OUI 00000c, PID 0x0111"),
)}


def restore_groups(protocols) -> list[tuple[int, str, tuple[str, ...]]]:
    """How tunnelled PDUs of ``protocols`` are given their destination back when all OVS can see is the
    EtherType: ``[(eth_type, destination MAC, protocol names)]``, one entry per EtherType, in table order.

    Raises:
        ValueError: two protocols share an EtherType but not a destination (``stp`` with ``cdp``/``vtp``/``pagp``/
            ``udld``: all 802.3 LLC frames, OVS cannot tell them apart); the message names them.
    """
    groups: dict[int, tuple[str, list[str]]] = {}
    for name in PROTOCOLS:
        if name not in protocols:
            continue
        p = PROTOCOLS[name]
        dst, names = groups.setdefault(p.eth_type, (p.dst, []))
        if dst != p.dst:
            raise ValueError(f"{names[0]} and {name} are both 802.3 LLC frames once tunnelled (OVS matches no LLC "
                             f"header), so the translator cannot tell which destination to give back "
                             f"({dst} or {p.dst})")
        names.append(name)
    return [(et, dst, tuple(names)) for et, (dst, names) in groups.items()]


def tunnel_dsts(protocols) -> list[tuple[str, int]]:
    """``[(destination MAC, eth_type)]`` of the PDUs of ``protocols`` that a tunnel rewrites, without repeats, in
    table order (PVST+ included with ``stp``)."""
    out: list[tuple[str, int]] = []
    for name, p in PROTOCOLS.items():
        if name in protocols:
            out += [(d, p.eth_type) for d in p.dsts if (d, p.eth_type) not in out]
    return out
