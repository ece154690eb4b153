"""Flows (:class:`harmless.otc.flows.Flow`, ovs-ofctl vocabulary) -> os-ken OpenFlow 1.3 FLOW_MODs.

One representation of a flow serves three uses: ``ovs-ofctl add-flows`` text (LME, OVS-semantics tests), the
controller's FLOW_MODs (this module) and human-readable dumps. Only the vocabulary OSHI uses is translated; anything
else raises ValueError.

os-ken 3.1 has no class for Open vSwitch's generic ``encap``/``decap`` actions (Nicira extension subtypes
NXAST_RAW_ENCAP = 46 and NXAST_RAW_DECAP = 47; wire format ``struct nx_action_encap``/``nx_action_decap`` in OVS
``lib/ofp-actions.c``): :class:`NXActionEncap`/:class:`NXActionDecap` below add them.
"""
from __future__ import annotations

import re
import struct

from os_ken.ofproto import nicira_ext
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from harmless.otc.flows import Flow

#: OpenFlow packet types (OpenFlow 1.5 Sec. 7.2.3.11): (namespace << 16) | ns_type.
PT_ETH = 0
PT_MPLS = (1 << 16) | 0x8847
PT_USE_NEXT_PROTO = (1 << 16) | 0xFFFE


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

_FIELDS = {"mpls_label": int, "vlan_vid": int, "eth_src": str, "eth_dst": str}


def _int(v: str) -> int:
    return int(v, 0)


def match_of(flow: Flow) -> parser.OFPMatch:
    """The flow's match as an OFPMatch (in_port, dl_type, mpls_label, dl_vlan)."""
    kw = {}
    for k, v in flow.match:
        if k == "in_port":
            kw["in_port"] = _int(v)
        elif k == "dl_type":
            kw["eth_type"] = _int(v)
        elif k == "mpls_label":
            kw["mpls_label"] = _int(v)
        elif k == "dl_vlan":
            kw["vlan_vid"] = 0x1000 | _int(v)
        else:
            raise ValueError(f"match field {k} not supported")
    return parser.OFPMatch(**kw)


def actions_of(flow: Flow) -> list:
    """The flow's instructions (apply-actions, goto-table)."""
    acts, inst = [], []
    for a in flow.actions:
        if a.startswith("goto_table:"):
            inst.append(parser.OFPInstructionGotoTable(int(a.split(":")[1])))
            continue
        m = re.fullmatch(r"set_field:(.+)->(\w+)", a)
        if m:
            val, field = m.groups()
            if field not in _FIELDS:
                raise ValueError(f"set_field {field} not supported")
            acts.append(parser.OFPActionSetField(**{field: _int(val) if _FIELDS[field] is int else val}))
        elif a.startswith("output:"):
            acts.append(parser.OFPActionOutput(_int(a.split(":")[1])))
        elif a.startswith("CONTROLLER:"):
            acts.append(parser.OFPActionOutput(ofp.OFPP_CONTROLLER, _int(a.split(":")[1])))
        elif a.startswith("push_mpls:"):
            acts.append(parser.OFPActionPushMpls(_int(a.split(":")[1])))
        elif a.startswith("pop_mpls:"):
            acts.append(parser.OFPActionPopMpls(_int(a.split(":")[1])))
        elif a.startswith("push_vlan:"):
            acts.append(parser.OFPActionPushVlan(_int(a.split(":")[1])))
        elif a == "pop_vlan":
            acts.append(parser.OFPActionPopVlan())
        elif a == "encap(mpls)":
            acts.append(NXActionEncap(PT_MPLS))
        elif a == "encap(ethernet)":
            acts.append(NXActionEncap(PT_ETH))
        elif a == "decap()":
            acts.append(NXActionDecap(PT_USE_NEXT_PROTO))
        elif a == "decap(packet_type(ns=0,type=0))":
            acts.append(NXActionDecap(PT_ETH))
        else:
            raise ValueError(f"action {a} not supported")
    if acts:
        inst.insert(0, parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, acts))
    return inst


def flow_mod(dp, flow: Flow, command: int = ofp.OFPFC_ADD) -> parser.OFPFlowMod:
    """FLOW_MOD for ``flow`` on datapath ``dp`` (no RESET_COUNTS: re-adding an existing flow keeps its counters)."""
    return parser.OFPFlowMod(datapath=dp, cookie=flow.cookie, table_id=flow.table, command=command,
                             priority=flow.priority, match=match_of(flow), instructions=actions_of(flow))


def delete_cookie(dp, cookie: int) -> parser.OFPFlowMod:
    """FLOW_MOD deleting every flow with exactly ``cookie`` in all tables."""
    return parser.OFPFlowMod(datapath=dp, cookie=cookie, cookie_mask=0xFFFFFFFFFFFFFFFF, table_id=ofp.OFPTT_ALL,
                             command=ofp.OFPFC_DELETE, out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                             match=parser.OFPMatch())


def stats_key(stat) -> tuple:
    """Key of a flow from an OFPFlowStats entry, comparable with :func:`harmless.pipelines.oshi.manager.flow_key`."""
    m = []
    for k, v in stat.match.items():
        if k == "in_port":
            m.append(("in_port", str(v)))
        elif k == "eth_type":
            m.append(("dl_type", f"{v:#06x}"))
        elif k == "mpls_label":
            m.append(("mpls_label", str(v)))
        elif k == "vlan_vid":
            m.append(("dl_vlan", str(v & 0xFFF)))
        else:
            m.append((k, str(v)))
    return stat.table_id, stat.priority, stat.cookie, frozenset(m)
