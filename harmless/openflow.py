"""OpenFlow 1.3 messages built once: typed flows, match and action builders, two renderings.

The one place where HARMLESS builds OpenFlow (Faucet's ``valve_of.py`` is the model: small pure builder functions).
A :class:`Flow` (table, priority, cookie, :class:`Match`, actions) is data; it renders as

* :meth:`Flow.to_ofctl`: one ``ovs-ofctl add-flow``/``add-flows``/``replace-flows`` line -- what the translator
  (``harmless.otc``) writes into its bundles and the OSHI LME / VXLAN lab feed to ``ovs-ofctl``;
* :meth:`Flow.to_flowmod`: an os-ken ``OFPFlowMod`` for a datapath -- what the controller apps (``pipelines/``) send.

Both renderings come from the same typed objects, so a flow means the same on either path. Values are kept the way
os-ken's ``OFPMatch``/``OFPActionSetField`` take them (ints; MACs and IPv4 addresses as lowercase strings;
``vlan_vid`` with :data:`OFPVID_PRESENT`), so a flow read back from a switch (``OFPFlowStats``) compares equal
(:func:`stats_key`). Spec references are to OpenFlow Switch Specification 1.3.5 (ONF TS-023).

This module imports nothing from HARMLESS and os-ken only inside the functions that build os-ken messages (from the
datapath's own ``ofproto_parser``), so the translator and the CLI load it without loading os-ken; the Nicira
``encap``/``decap`` action classes (no os-ken class exists) are created on first use by :func:`nx_encap_classes`.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, fields
from typing import Union

#: OFPVID_PRESENT (§7.2.3.8, Table 13): the "a VLAN tag is present" bit of the ``vlan_vid`` field.
OFPVID_PRESENT = 0x1000
#: OFPVID_NONE (§7.2.3.8): ``vlan_vid`` of a frame without a VLAN tag.
OFPVID_NONE = 0x0000
#: IEEE 802.1Q C-tag TPID.
TPID_8021Q = 0x8100
#: IEEE 802.1ad S-tag TPID (QinQ outer tag).
TPID_8021AD = 0x88A8
ETH_TYPE_IPV4, ETH_TYPE_ARP = 0x0800, 0x0806
ETH_TYPE_MPLS, ETH_TYPE_MPLS_MC = 0x8847, 0x8848
#: OFPP_CONTROLLER (§7.2.1, Table: port numbers): send to the controller as a PACKET_IN.
OFPP_CONTROLLER = 0xFFFFFFFD
#: OFPP_FLOOD (§7.2.1): all ports but the ingress port and ports with OFPPC_NO_FLOOD.
OFPP_FLOOD = 0xFFFFFFFB
#: OFPP_ANY (§7.2.1): wildcard port for deletes and stats requests.
OFPP_ANY = 0xFFFFFFFF
#: OFPCML_NO_BUFFER (§7.2.5): a PACKET_IN carries the whole frame, no buffer id.
OFPCML_NO_BUFFER = 0xFFFF
#: OFPTT_ALL (§7.3.4.1): every table (deletes, stats).
OFPTT_ALL = 0xFF
#: every bit of a 64-bit cookie (cookie_mask of "exactly this cookie", §6.4).
COOKIE_EXACT = 0xFFFFFFFFFFFFFFFF
#: OpenFlow packet types (OpenFlow 1.5 §7.2.3.11; Open vSwitch encap/decap): (namespace << 16) | ns_type.
PT_ETH = 0
PT_MPLS = (1 << 16) | ETH_TYPE_MPLS
PT_USE_NEXT_PROTO = (1 << 16) | 0xFFFE


# ----------------------------------------------------------------------------------------------------------- match
#: ovs-ofctl names of the OXM fields (ovs-fields(7)); ``vlan_vid`` is rendered separately (``dl_vlan``/``vlan_tci``).
_OFCTL_FIELD = {"in_port": "in_port", "eth_type": "dl_type", "mpls_label": "mpls_label", "eth_src": "dl_src",
                "eth_dst": "dl_dst", "ip_proto": "nw_proto", "ipv4_src": "nw_src", "ipv4_dst": "nw_dst",
                "tcp_src": "tcp_src", "tcp_dst": "tcp_dst", "udp_src": "udp_src", "udp_dst": "udp_dst",
                "tunnel_id": "tun_id"}


@dataclass(frozen=True)
class Match:
    """An exact-match flow match (OXM fields, §7.2.3.7 "Flow Match Fields", Table 11); ``None`` = wildcarded.

    Values are what os-ken's ``OFPMatch`` takes: ints, MACs lowercase ``"aa:bb:.."``, IPv4 addresses dotted.
    ``vlan_vid`` carries :data:`OFPVID_PRESENT` (§7.2.3.8): ``OFPVID_PRESENT | 107`` matches a frame whose outer
    tag has VID 107, :data:`OFPVID_NONE` an untagged frame. The field order is the rendering order of
    :meth:`to_ofctl`.
    """

    in_port: int | None = None
    vlan_vid: int | None = None
    eth_type: int | None = None
    mpls_label: int | None = None
    eth_src: str | None = None
    eth_dst: str | None = None
    ip_proto: int | None = None
    ipv4_src: str | None = None
    ipv4_dst: str | None = None
    tcp_src: int | None = None
    tcp_dst: int | None = None
    udp_src: int | None = None
    udp_dst: int | None = None
    tunnel_id: int | None = None

    def __repr__(self) -> str:
        return "Match(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"

    def items(self) -> tuple[tuple[str, object], ...]:
        """``((OXM field, value), ...)`` of the fields that are set, in rendering order."""
        return tuple((f.name, getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None)

    def oxm(self) -> dict:
        """``{OXM field: value}``: the keyword arguments of os-ken's ``OFPMatch`` (and what ``OFPFlowStats.match``
        reads back)."""
        return dict(self.items())

    def to_ofctl(self) -> str:
        """The match in ovs-ofctl syntax (ovs-fields(7)), e.g. ``in_port=1900,dl_vlan=107``; ``""`` matches all."""
        out = []
        for k, v in self.items():
            if k == "vlan_vid":
                out.append(f"dl_vlan={v & 0xFFF}" if v & OFPVID_PRESENT else f"vlan_tci=0x{v:04x}/0x1fff")
            elif k == "eth_type":
                out.append(f"dl_type={v:#06x}")
            elif k == "tunnel_id":
                out.append(f"tun_id={v:#x}")
            else:
                out.append(f"{_OFCTL_FIELD[k]}={v}")
        return ",".join(out)


def match(**oxm) -> Match:
    """A :class:`Match` from OXM keyword arguments (Faucet's ``valve_of.match``), e.g.
    ``match(in_port=1900, vlan_vid=vid_present(107))``.

    Raises:
        TypeError: an OXM field this module does not model.
    """
    return Match(**oxm)


def vid_present(vid: int) -> int:
    """``vid`` with OFPVID_PRESENT set: the ``vlan_vid`` value of a tagged frame (§7.2.3.8).

    Raises:
        ValueError: VID outside 1..4094 (0 is "priority tag only", 4095 reserved; IEEE 802.1Q Table 9-2).
    """
    if not 1 <= vid <= 4094:
        raise ValueError(f"VID {vid} outside 1..4094")
    return OFPVID_PRESENT | vid


# --------------------------------------------------------------------------------------------------------- actions
class _Action:
    """What every action object offers (its docstring names the OpenFlow 1.3.5 section)."""

    __slots__ = ()

    def to_ofctl(self) -> str:
        """The action in ``ovs-ofctl`` syntax (ovs-actions(7))."""
        raise NotImplementedError

    def to_ofp(self, ofp, parser):
        """The os-ken action object (``ofp``/``parser``: the datapath's ``ofproto``/``ofproto_parser``).

        Raises:
            ValueError: an instruction (meter, goto_table), not an action: :meth:`Flow.instructions` places those.
        """
        raise ValueError(f"{type(self).__name__} is an instruction, not an action")


@dataclass(frozen=True)
class Output(_Action):
    """OFPAT_OUTPUT (§7.2.5 "Action Structures", ``ofp_action_output``): send to ``port``; to
    :data:`OFPP_CONTROLLER` with ``max_len`` bytes of the frame (:data:`OFPCML_NO_BUFFER` = whole frame)."""

    port: int
    max_len: int = OFPCML_NO_BUFFER

    def to_ofctl(self) -> str:
        return f"CONTROLLER:{self.max_len}" if self.port == OFPP_CONTROLLER else f"output:{self.port}"

    def to_ofp(self, ofp, parser):
        if self.port == OFPP_CONTROLLER:
            return parser.OFPActionOutput(self.port, self.max_len)
        return parser.OFPActionOutput(self.port)


@dataclass(frozen=True)
class PushVlan(_Action):
    """OFPAT_PUSH_VLAN (§7.2.5, ``ofp_action_push``): push a new outermost VLAN tag with TPID ``ethertype``
    (0x8100 C-tag, 0x88a8 S-tag); its VID is set by a following ``set_field`` of ``vlan_vid``."""

    ethertype: int = TPID_8021Q

    def to_ofctl(self) -> str:
        return f"push_vlan:{self.ethertype:#06x}"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionPushVlan(self.ethertype)


@dataclass(frozen=True)
class PopVlan(_Action):
    """OFPAT_POP_VLAN (§7.2.5, ``ofp_action_generic``): remove the outermost VLAN tag (an S-tag of a QinQ frame;
    the C-tag stays)."""

    def to_ofctl(self) -> str:
        return "pop_vlan"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionPopVlan()


@dataclass(frozen=True)
class SetField(_Action):
    """OFPAT_SET_FIELD (§7.2.5, ``ofp_action_set_field``): write ``value`` into OXM field ``field`` (``vlan_vid``
    with OFPVID_PRESENT, ``eth_src``, ``eth_dst``, ``mpls_label``, ``tunnel_id``)."""

    field: str
    value: Union[int, str]

    def to_ofctl(self) -> str:
        if self.field == "tunnel_id":
            return f"set_field:{self.value:#x}->tun_id"
        return f"set_field:{self.value}->{self.field}"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionSetField(**{self.field: self.value})


@dataclass(frozen=True)
class SetQueue(_Action):
    """OFPAT_SET_QUEUE (§7.2.5, ``ofp_action_set_queue``): the queue of the output port the frame is sent on."""

    queue_id: int

    def to_ofctl(self) -> str:
        return f"set_queue:{self.queue_id}"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionSetQueue(self.queue_id)


@dataclass(frozen=True)
class PushMpls(_Action):
    """OFPAT_PUSH_MPLS (§7.2.5, ``ofp_action_push``): push an MPLS label stack entry, ethertype 0x8847/0x8848."""

    ethertype: int = ETH_TYPE_MPLS

    def to_ofctl(self) -> str:
        return f"push_mpls:{self.ethertype:#06x}"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionPushMpls(self.ethertype)


@dataclass(frozen=True)
class PopMpls(_Action):
    """OFPAT_POP_MPLS (§7.2.5, ``ofp_action_pop_mpls``): pop the outer label; ``ethertype`` is the payload's."""

    ethertype: int

    def to_ofctl(self) -> str:
        return f"pop_mpls:{self.ethertype:#06x}"

    def to_ofp(self, ofp, parser):
        return parser.OFPActionPopMpls(self.ethertype)


@dataclass(frozen=True)
class Encap(_Action):
    """Open vSwitch ``encap(<header>)`` (Nicira NXAST_RAW_ENCAP = 46; OVS ``lib/ofp-actions.c``): ``"mpls"`` wraps
    the whole frame in an MPLS label stack entry, ``"ethernet"`` puts a new Ethernet header in front."""

    header: str

    def to_ofctl(self) -> str:
        return f"encap({self.header})"

    def to_ofp(self, ofp, parser):
        enc, _ = nx_encap_classes()
        return enc({"mpls": PT_MPLS, "ethernet": PT_ETH}[self.header])


@dataclass(frozen=True)
class Decap(_Action):
    """Open vSwitch ``decap()`` (Nicira NXAST_RAW_DECAP = 47): remove the outer header; the new packet type is the
    next protocol's (:data:`PT_USE_NEXT_PROTO`) or ``packet_type`` (:data:`PT_ETH`: the inner frame is Ethernet)."""

    packet_type: int = PT_USE_NEXT_PROTO

    def to_ofctl(self) -> str:
        return "decap()" if self.packet_type == PT_USE_NEXT_PROTO else \
            f"decap(packet_type(ns={self.packet_type >> 16},type={self.packet_type & 0xFFFF}))"

    def to_ofp(self, ofp, parser):
        _, dec = nx_encap_classes()
        return dec(self.packet_type)


@dataclass(frozen=True)
class Meter(_Action):
    """OFPIT_METER (§7.2.4 "Flow Instruction Structures", ``ofp_instruction_meter``): send the frame through meter
    ``meter_id`` first (ovs-ofctl writes it as the first "action", ``meter:<id>``)."""

    meter_id: int

    def to_ofctl(self) -> str:
        return f"meter:{self.meter_id}"


@dataclass(frozen=True)
class GotoTable(_Action):
    """OFPIT_GOTO_TABLE (§7.2.4, ``ofp_instruction_goto_table``): continue in table ``table`` (> this one)."""

    table: int

    def to_ofctl(self) -> str:
        return f"goto_table:{self.table}"


Action = Union[Output, PushVlan, PopVlan, SetField, SetQueue, PushMpls, PopMpls, Encap, Decap, Meter, GotoTable]


def output_port(port: int) -> Output:
    """Send to OpenFlow port ``port`` (§7.2.5 OFPAT_OUTPUT)."""
    return Output(port)


def output_controller(max_len: int = OFPCML_NO_BUFFER) -> Output:
    """Send to the controller as a PACKET_IN (§7.2.5 OFPAT_OUTPUT to OFPP_CONTROLLER; whole frame by default)."""
    return Output(OFPP_CONTROLLER, max_len)


def pop_vlan() -> PopVlan:
    """Remove the outermost VLAN tag (§7.2.5 OFPAT_POP_VLAN)."""
    return PopVlan()


def set_field(**kw) -> SetField:
    """Write one OXM field (§7.2.5 OFPAT_SET_FIELD), e.g. ``set_field(eth_dst="02:..")``.

    Raises:
        ValueError: not exactly one field given.
    """
    if len(kw) != 1:
        raise ValueError(f"set_field takes exactly one field, got {sorted(kw)}")
    (k, v), = kw.items()
    return SetField(k, v)


def set_vlan_vid(vid: int) -> SetField:
    """Set the outer tag's VID (§7.2.5 OFPAT_SET_FIELD of ``vlan_vid``, with OFPVID_PRESENT, §7.2.3.8)."""
    return SetField("vlan_vid", vid_present(vid))


def push_vlan_act(vid: int, tpid: int = TPID_8021Q) -> tuple[PushVlan, SetField]:
    """Push a tag with TPID ``tpid`` and VID ``vid``: OFPAT_PUSH_VLAN then OFPAT_SET_FIELD ``vlan_vid``
    (§7.2.5; a pushed tag's VID is undefined until set).

    Raises:
        ValueError: VID outside 1..4094.
    """
    return PushVlan(tpid), set_vlan_vid(vid)


def meter_act(meter_id: int) -> Meter:
    """Apply meter ``meter_id`` (§7.2.4 OFPIT_METER; first in the ovs-ofctl action list)."""
    return Meter(meter_id)


def set_queue(queue_id: int) -> SetQueue:
    """Select queue ``queue_id`` of the output port (§7.2.5 OFPAT_SET_QUEUE)."""
    return SetQueue(queue_id)


def goto_table(table: int) -> GotoTable:
    """Continue the pipeline in ``table`` (§7.2.4 OFPIT_GOTO_TABLE)."""
    return GotoTable(table)


def push_mpls(ethertype: int = ETH_TYPE_MPLS) -> PushMpls:
    """Push an MPLS shim header (§7.2.5 OFPAT_PUSH_MPLS); 0x8847 unicast, 0x8848 multicast."""
    return PushMpls(ethertype)


def pop_mpls(ethertype: int) -> PopMpls:
    """Pop the outer MPLS shim header; ``ethertype`` is the payload's (§7.2.5 OFPAT_POP_MPLS)."""
    return PopMpls(ethertype)


def set_mpls_label(label: int) -> SetField:
    """Set the outer MPLS label (§7.2.5 OFPAT_SET_FIELD of ``mpls_label``, 20 bits, RFC 3032)."""
    return SetField("mpls_label", label)


# ------------------------------------------------------------------------------------------------------------ flow
@dataclass(frozen=True)
class Flow:
    """One flow entry (§5.2 "Flow Table", §7.3.4.2 "Modify Flow Entry Message").

    Attributes:
        priority: 0..65535; the highest-priority matching entry of a table wins.
        match: the :class:`Match`.
        actions: the action list in order, with :class:`Meter` first and :class:`GotoTable` last where present
            (they are instructions, §7.2.4); empty = drop (no instruction).
        cookie: 64-bit opaque value (deletes and stats select on it, §6.4).
        table: table id (0..254).
        idle_timeout: seconds without a hit before the switch removes the entry; 0 = never.
        note: a human label, not part of the flow (not rendered, not compared).
    """

    priority: int
    match: Match = Match()
    actions: tuple = ()
    cookie: int = 0
    table: int = 0
    idle_timeout: int = 0
    note: str = field(default="", compare=False)

    def to_ofctl(self) -> str:
        """One ``ovs-ofctl add-flow``/``add-flows``/``replace-flows`` line, e.g.
        ``cookie=0x4841524d4c455353,table=0,priority=100,in_port=1900,dl_vlan=107,actions=pop_vlan,output:1007``."""
        m = self.match.to_ofctl()
        acts = ",".join(a.to_ofctl() for a in self.actions) or "drop"
        idle = f",idle_timeout={self.idle_timeout}" if self.idle_timeout else ""
        return f"cookie={self.cookie:#x},table={self.table},priority={self.priority}{idle}" + (f",{m}" if m else "") \
            + f",actions={acts}"

    def instructions(self, ofp, parser) -> list:
        """os-ken instructions (§7.2.4): meter, apply-actions, goto-table (in that order), none for a drop.

        Raises:
            ValueError: an action that is none of this module's action objects.
        """
        inst, acts = [], []
        for a in self.actions:
            if not isinstance(a, _Action):
                raise ValueError(f"action {a!r} not supported")
            if isinstance(a, Meter):
                inst.append(parser.OFPInstructionMeter(a.meter_id, ofp.OFPIT_METER))
            elif not isinstance(a, GotoTable):
                acts.append(a.to_ofp(ofp, parser))
        if acts:
            inst.append(parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, acts))
        inst += [parser.OFPInstructionGotoTable(a.table) for a in self.actions if isinstance(a, GotoTable)]
        return inst

    def to_flowmod(self, datapath, command: int | None = None):
        """An os-ken ``OFPFlowMod`` (§7.3.4.2; default OFPFC_ADD) for ``datapath``. No OFPFF_RESET_COUNTS: adding a
        flow that exists keeps its counters."""
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        return parser.OFPFlowMod(datapath=datapath, cookie=self.cookie, table_id=self.table,
                                 command=ofp.OFPFC_ADD if command is None else command, priority=self.priority,
                                 idle_timeout=self.idle_timeout, match=parser.OFPMatch(**self.match.oxm()),
                                 instructions=self.instructions(ofp, parser))

    def key(self) -> tuple:
        """``(table, priority, cookie, frozenset of OXM items)``: what identifies the entry in a switch (compare
        :func:`stats_key`)."""
        return self.table, self.priority, self.cookie, frozenset(self.match.items())

    def digest(self, bits: int = 48) -> int:
        """The first ``bits`` bits of SHA-256 over the flow's ovs-ofctl priority, match and actions (a cookie derived
        from what the flow does: the same flow always gets the same value, a changed one another)."""
        acts = ",".join(a.to_ofctl() for a in self.actions)
        h = hashlib.sha256(f"priority={self.priority},{self.match.to_ofctl()},actions={acts}".encode()).digest()
        return int.from_bytes(h, "big") >> (256 - bits)


def flows_ofctl(flows) -> str:
    """``ovs-ofctl add-flows``/``replace-flows`` input: one :meth:`Flow.to_ofctl` line per flow."""
    return "".join(f.to_ofctl() + "\n" for f in flows)


def stats_key(stat) -> tuple:
    """:meth:`Flow.key` of an os-ken ``OFPFlowStats`` entry (a flow read back from a switch)."""
    return stat.table_id, stat.priority, stat.cookie, frozenset(stat.match.items())


# ------------------------------------------------------------------------------------------- messages (os-ken)
def flowmod(datapath, flow: Flow, command: int | None = None):
    """FLOW_MOD for ``flow`` (§7.3.4.2); :meth:`Flow.to_flowmod`."""
    return flow.to_flowmod(datapath, command)


def delete_cookie(datapath, cookie: int, mask: int = COOKIE_EXACT):
    """FLOW_MOD OFPFC_DELETE of every entry, in every table, whose cookie equals ``cookie`` under ``mask`` (§6.4:
    ``cookie_mask`` restricts deletes; out_port/out_group OFPP_ANY/OFPG_ANY = no restriction)."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPFlowMod(datapath=datapath, cookie=cookie, cookie_mask=mask, table_id=ofp.OFPTT_ALL,
                             command=ofp.OFPFC_DELETE, out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                             match=parser.OFPMatch())


def delete_all(datapath):
    """FLOW_MOD OFPFC_DELETE of every entry in every table (§6.4; cookie mask 0 = any cookie)."""
    return delete_cookie(datapath, 0, 0)


def flow_stats_request(datapath, cookie: int = 0, mask: int = 0):
    """OFPMP_FLOW request (§7.3.5.2) for every table's entries whose cookie equals ``cookie`` under ``mask``."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPFlowStatsRequest(datapath, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY, cookie, mask,
                                      parser.OFPMatch())


def packet_out(datapath, actions, data: bytes | None, in_port: int | None = None, buffer_id: int | None = None):
    """PACKET_OUT (§7.3.7): apply ``actions`` (this module's action objects) to ``data`` (or to the switch's buffer
    ``buffer_id``); ``in_port`` defaults to OFPP_CONTROLLER."""
    ofp, parser = datapath.ofproto, datapath.ofproto_parser
    return parser.OFPPacketOut(datapath=datapath, buffer_id=ofp.OFP_NO_BUFFER if buffer_id is None else buffer_id,
                               in_port=ofp.OFPP_CONTROLLER if in_port is None else in_port,
                               actions=[a.to_ofp(ofp, parser) for a in actions], data=data)


def barrier(datapath):
    """OFPT_BARRIER_REQUEST (§7.3.8): the switch answers once every earlier message is processed."""
    return datapath.ofproto_parser.OFPBarrierRequest(datapath)


def port_desc_request(datapath):
    """OFPMP_PORT_DESC request (§7.3.5.13): the switch's ports."""
    return datapath.ofproto_parser.OFPPortDescStatsRequest(datapath, 0)


def role_request(datapath, role: str, generation_id: int):
    """OFPT_ROLE_REQUEST (§7.3.9, §6.3.7 "Multiple Controllers"): ``role`` is ``master``, ``slave`` or ``equal``.

    Raises:
        KeyError: another role name.
    """
    ofp = datapath.ofproto
    code = {"master": ofp.OFPCR_ROLE_MASTER, "slave": ofp.OFPCR_ROLE_SLAVE, "equal": ofp.OFPCR_ROLE_EQUAL}[role]
    return datapath.ofproto_parser.OFPRoleRequest(datapath, code, generation_id)


# ------------------------------------------------------------------------------------------------- meters (text)
def meter_ofctl(meter_id: int, kbps: int, burst_kb: int) -> str:
    """``ovs-ofctl add-meter``/``mod-meter`` text of a meter (§7.3.4.4 "Meter Modification Message",
    ``ofp_meter_band_drop``): rate in kbit/s, one drop band with ``burst_size`` in kbit, statistics on."""
    return f"meter={meter_id},kbps,burst,stats,bands=type=drop,rate={kbps},burst_size={burst_kb}"


# ------------------------------------------------------------------------------------ Nicira encap/decap (os-ken)
@functools.cache
def nx_encap_classes():
    """``(NXActionEncap, NXActionDecap)``: os-ken classes for Open vSwitch's ``encap``/``decap`` actions.

    os-ken 3.1 has none. Wire format: ``struct nx_action_encap`` (subtype NXAST_RAW_ENCAP = 46: ``hdr_size`` u16,
    ``new_pkt_type`` u32) and ``struct nx_action_decap`` (NXAST_RAW_DECAP = 47: 2 pad bytes, ``new_pkt_type`` u32)
    in OVS ``lib/ofp-actions.c``. Created (and registered with os-ken's NXAction parser) on first use, so this module
    imports os-ken only when a controller builds a message.
    """
    import struct

    from os_ken.ofproto import nicira_ext
    from os_ken.ofproto import ofproto_v1_3_parser as parser

    class NXActionEncap(parser.NXAction):
        """``encap(<header>)``: push a header and change the packet type (``new_pkt_type``: PT_ETH, PT_MPLS)."""

        _subtype = nicira_ext.NXAST_RAW_ENCAP
        _fmt_str = "!HI"           # hdr_size (0 = default), new_pkt_type

        def __init__(self, new_pkt_type, hdr_size=0, type_=None, len_=None, vendor=None, subtype=None):
            super().__init__()
            self.new_pkt_type, self.hdr_size = new_pkt_type, hdr_size

        @classmethod
        def parser(cls, buf):
            hdr_size, pt = struct.unpack_from(cls._fmt_str, buf)
            return cls(pt, hdr_size)

        def serialize_body(self):
            return bytearray(struct.pack(self._fmt_str, self.hdr_size, self.new_pkt_type))

    class NXActionDecap(parser.NXAction):
        """``decap()`` (new_pkt_type = PT_USE_NEXT_PROTO) or ``decap(packet_type(ns=0,type=0))`` (PT_ETH)."""

        _subtype = nicira_ext.NXAST_RAW_DECAP
        _fmt_str = "!2xI"

        def __init__(self, new_pkt_type=PT_USE_NEXT_PROTO, type_=None, len_=None, vendor=None, subtype=None):
            super().__init__()
            self.new_pkt_type = new_pkt_type

        @classmethod
        def parser(cls, buf):
            (pt,) = struct.unpack_from(cls._fmt_str, buf)
            return cls(pt)

        def serialize_body(self):
            return bytearray(struct.pack(self._fmt_str, self.new_pkt_type))

    parser.NXAction.register(NXActionEncap)
    parser.NXAction.register(NXActionDecap)
    return NXActionEncap, NXActionDecap
