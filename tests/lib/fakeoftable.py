"""A fake OpenFlow 1.3 switch for unit tests: load flows, then ask where a packet goes (no OVS, no root).

Faucet's ``clib/fakeoftable.py`` is the model. A :class:`FakeOFTable` holds the flow tables of one switch, filled
from :class:`harmless.openflow.Flow` objects, from ``ovs-ofctl`` text (:func:`parse_ofctl`, the exact text the
translator writes) or from os-ken FLOW_MODs (:meth:`FakeOFTable.apply_ofmsgs`, what a controller app sends).
:meth:`FakeOFTable.fate` runs one packet through the pipeline and answers with a :class:`Fate`: the ports it leaves
on and the packet as it leaves each (VLAN tags, MACs, MPLS labels, queue), the meters it passed, the entries it hit,
or that it was dropped. :class:`FakeOFNetwork` joins several switches by patch ports (``br-otc`` and ``br-of``, two
OSHI nodes) and follows a packet across them.

A packet is a dict of OXM field names (``in_port``, ``eth_src``, ``eth_dst``, ``eth_type``, ``ipv4_src``, ...) plus:

* ``vlans``: the VLAN tags, outermost first, as ``(TPID, VID)`` pairs (``((0x88a8, 110), (0x8100, 7))`` is a QinQ
  frame with S-tag 110 and C-tag 7). ``vlan_vid=OFPVID_PRESENT|vid`` may be given instead for one 802.1Q tag. A
  packet that leaves tagged also carries ``vlan_vid`` (the outer tag with OFPVID_PRESENT, as OpenFlow matches it);
  an untagged one carries neither key.
* ``mpls``: the MPLS label stack, outermost first; ``inner``: the encapsulated frame after Open vSwitch's
  ``encap(mpls)`` (a dict like this one); ``queue_id``: the queue chosen by ``set_queue``.

Semantics (OpenFlow 1.3.5): the highest-priority matching entry of a table wins (§5.3); two matching entries of the
same priority are an error here (the spec leaves it undefined); no match is a table miss and drops (§5.4); apply-
actions run in order (§5.10), ``goto_table`` only goes forward (§5.9); output to the packet's own ``in_port`` is
dropped, as a switch does (only OFPP_IN_PORT sends it back, §7.2.1). Groups are not modelled: none of HARMLESS's
flows use them (a group action raises).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harmless import openflow as of
from harmless.openflow import (Decap, Encap, Flow, GotoTable, Match, Meter, Output, PopMpls, PopVlan, PushMpls,
                               PushVlan, SetField, SetQueue)

OFPP_IN_PORT = 0xFFFFFFF8
ZERO_MAC = "00:00:00:00:00:00"


class FakeOFTableError(Exception):
    """A flow or packet the fake switch refuses (ambiguous match, backward goto, unknown action)."""


# ------------------------------------------------------------------------------------------------- packets
def packet(**fields) -> dict:
    """A packet in this module's form: ``vlan_vid`` (one 802.1Q tag) becomes ``vlans``; MACs lowercase."""
    pkt = dict(fields)
    vid = pkt.pop("vlan_vid", None)
    if vid is not None and "vlans" not in pkt and vid & of.OFPVID_PRESENT:
        pkt["vlans"] = ((of.TPID_8021Q, vid & 0xFFF),)
    pkt["vlans"] = tuple(pkt.get("vlans", ()))
    for k in ("eth_src", "eth_dst"):
        if k in pkt:
            pkt[k] = pkt[k].lower()
    return pkt


def _value(pkt: dict, name: str):
    """The value OpenFlow matches for field ``name`` (vlan_vid: outer tag with OFPVID_PRESENT or OFPVID_NONE)."""
    if name == "vlan_vid":
        return of.OFPVID_PRESENT | pkt["vlans"][0][1] if pkt["vlans"] else of.OFPVID_NONE
    if name == "mpls_label":
        return pkt["mpls"][0] if pkt.get("mpls") else None
    return pkt.get(name)


def matches(m: Match, pkt: dict) -> bool:
    """Whether packet ``pkt`` matches ``m`` (every field set in ``m`` equal; the rest wildcarded)."""
    return all(_value(pkt, k) == v for k, v in m.items())


def _leaving(pkt: dict) -> dict:
    """The packet as an output reports it: ``vlan_vid`` added when tagged, empty ``vlans`` dropped."""
    out = {k: v for k, v in pkt.items() if not (k == "vlans" and not v)}
    if pkt["vlans"]:
        out["vlan_vid"] = of.OFPVID_PRESENT | pkt["vlans"][0][1]
    return out


def _set_field(pkt: dict, name: str, value) -> None:
    if name == "vlan_vid":
        if not pkt["vlans"]:
            raise FakeOFTableError("set_field vlan_vid on an untagged packet (push_vlan first)")
        tpid = pkt["vlans"][0][0]
        pkt["vlans"] = ((tpid, value & 0xFFF),) + pkt["vlans"][1:]
    elif name == "mpls_label":
        if not pkt.get("mpls"):
            raise FakeOFTableError("set_field mpls_label on a packet without MPLS")
        pkt["mpls"] = (value,) + pkt["mpls"][1:]
    else:
        pkt[name] = value.lower() if name in ("eth_src", "eth_dst") else value


def _encap(pkt: dict, header: str) -> None:
    if header == "mpls":          # the whole frame (Ethernet header included) becomes the MPLS payload
        inner = {k: v for k, v in pkt.items() if k not in ("in_port", "queue_id")}
        for k in list(pkt):
            if k not in ("in_port", "queue_id"):
                del pkt[k]
        pkt.update(vlans=(), mpls=(0,), inner=inner, packet_type="mpls")
    elif header == "ethernet":    # a new Ethernet header in front; its type is the payload's (MPLS)
        if pkt.get("packet_type") != "mpls":
            raise FakeOFTableError("encap(ethernet) on a packet that is not MPLS")
        pkt.pop("packet_type")
        pkt.update(eth_src=ZERO_MAC, eth_dst=ZERO_MAC, eth_type=of.ETH_TYPE_MPLS)
    else:
        raise FakeOFTableError(f"encap({header}) not modelled")


def _decap(pkt: dict, packet_type: int) -> None:
    if "packet_type" not in pkt:            # Ethernet: the header goes, the MPLS packet stays
        if pkt.get("eth_type") not in (of.ETH_TYPE_MPLS, of.ETH_TYPE_MPLS_MC) or pkt["vlans"]:
            raise FakeOFTableError("decap() of an Ethernet frame that is not untagged MPLS")
        for k in ("eth_src", "eth_dst", "eth_type"):
            pkt.pop(k, None)
        pkt["packet_type"] = "mpls"
    elif packet_type == of.PT_ETH and pkt.get("inner") is not None:   # MPLS carrying Ethernet: the inner frame
        inner = pkt["inner"]
        keep = {k: pkt[k] for k in ("in_port", "queue_id") if k in pkt}
        pkt.clear()
        pkt.update(inner, **keep)
    else:
        raise FakeOFTableError(f"decap to packet type {packet_type:#x} not modelled")


def apply_action(pkt: dict, a) -> None:
    """Change ``pkt`` in place by one header action (§7.2.5; push_vlan pushes an outermost tag with VID 0 until a
    ``set_field`` of ``vlan_vid`` -- a new tag copies the VID of the tag it covers, if any, as §7.2.5 says)."""
    if isinstance(a, PushVlan):
        vid = pkt["vlans"][0][1] if pkt["vlans"] else 0
        pkt["vlans"] = ((a.ethertype, vid),) + pkt["vlans"]
    elif isinstance(a, PopVlan):
        if not pkt["vlans"]:
            raise FakeOFTableError("pop_vlan on an untagged packet")
        pkt["vlans"] = pkt["vlans"][1:]
    elif isinstance(a, SetField):
        _set_field(pkt, a.field, a.value)
    elif isinstance(a, SetQueue):
        pkt["queue_id"] = a.queue_id
    elif isinstance(a, PushMpls):
        pkt["mpls"] = (pkt["mpls"][0] if pkt.get("mpls") else 0,) + tuple(pkt.get("mpls", ()))
        pkt["eth_type"] = a.ethertype
    elif isinstance(a, PopMpls):
        if not pkt.get("mpls"):
            raise FakeOFTableError("pop_mpls on a packet without MPLS")
        pkt["mpls"] = pkt["mpls"][1:]
        if not pkt["mpls"]:
            del pkt["mpls"]
            pkt["eth_type"] = a.ethertype
    elif isinstance(a, Encap):
        _encap(pkt, a.header)
    elif isinstance(a, Decap):
        _decap(pkt, a.packet_type)
    else:
        raise FakeOFTableError(f"action {a!r} not modelled")


# ---------------------------------------------------------------------------------------------------- fate
@dataclass
class Fate:
    """Where one packet went through one switch.

    Attributes:
        outputs: ``[(port, packet as it left)]`` in order; OFPP_CONTROLLER for a PACKET_IN.
        meters: meter ids the packet passed (OFPIT_METER), in order.
        hits: ``[(table, Flow)]`` the entries that matched, in pipeline order.
        miss: the table where no entry matched (the packet was dropped there), else None.
    """

    outputs: list = field(default_factory=list)
    meters: list = field(default_factory=list)
    hits: list = field(default_factory=list)
    miss: int | None = None

    @property
    def ports(self) -> list:
        """The output ports in order (OFPP_CONTROLLER for the controller)."""
        return [p for p, _ in self.outputs]

    @property
    def dropped(self) -> bool:
        """Nothing left the switch (not even towards the controller)."""
        return not self.outputs

    @property
    def to_controller(self) -> bool:
        return of.OFPP_CONTROLLER in self.ports

    def on(self, port: int) -> dict:
        """The one packet that left on ``port``.

        Raises:
            AssertionError: none or several left there.
        """
        got = [p for q, p in self.outputs if q == port]
        assert len(got) == 1, f"{len(got)} packets left on port {port}: {self.outputs}"
        return got[0]


class FakeOFTable:
    """The flow tables of one OpenFlow 1.3 switch.

    Args:
        flows: initial :class:`harmless.openflow.Flow` entries.
        name: for messages.
    """

    def __init__(self, flows=(), name: str = "switch"):
        self.name = name
        self.tables: dict[int, list[Flow]] = {}
        self.add(flows)

    # --------------------------------------------------------------- loading
    def add(self, flows) -> "FakeOFTable":
        """Add entries; an entry with the same table, priority and match replaces the old one (OFPFC_ADD, §6.4)."""
        for f in flows:
            t = self.tables.setdefault(f.table, [])
            t[:] = [g for g in t if not (g.priority == f.priority and g.match == f.match)]
            t.append(f)
        return self

    def add_ofctl(self, text: str) -> "FakeOFTable":
        """Add the flows of ``ovs-ofctl add-flows`` text (one :func:`parse_ofctl` line each; blanks skipped)."""
        return self.add(parse_ofctl(line) for line in text.splitlines() if line.strip())

    def delete_cookie(self, cookie: int, mask: int = of.COOKIE_EXACT) -> int:
        """OFPFC_DELETE in all tables by cookie under ``mask`` (§6.4). Returns how many entries went."""
        n = 0
        for t in self.tables.values():
            keep = [f for f in t if (f.cookie & mask) != (cookie & mask)]
            n += len(t) - len(keep)
            t[:] = keep
        return n

    def apply_ofmsgs(self, msgs) -> "FakeOFTable":
        """Apply os-ken messages a controller sent: FLOW_MOD add/delete (by cookie, all tables); barriers, packet-
        outs, port-desc/flow-stats/role requests are ignored.

        Raises:
            FakeOFTableError: another message or FLOW_MOD command.
        """
        for m in msgs:
            name = type(m).__name__
            if name in ("OFPBarrierRequest", "OFPPacketOut", "OFPPortDescStatsRequest", "OFPFlowStatsRequest",
                        "OFPRoleRequest"):
                continue
            if name != "OFPFlowMod":
                raise FakeOFTableError(f"{self.name}: message {name} not modelled")
            if m.command == 0:                                   # OFPFC_ADD
                self.add([flow_of_flowmod(m)])
            elif m.command == 3:                                 # OFPFC_DELETE
                if m.table_id != of.OFPTT_ALL or list(m.match.items()):
                    raise FakeOFTableError(f"{self.name}: only deletes by cookie in all tables are modelled")
                self.delete_cookie(m.cookie, m.cookie_mask)
            else:
                raise FakeOFTableError(f"{self.name}: FLOW_MOD command {m.command} not modelled")
        return self

    def flows(self) -> list[Flow]:
        """Every entry, by table then priority (highest first)."""
        return [f for t in sorted(self.tables) for f in sorted(self.tables[t], key=lambda f: -f.priority)]

    # --------------------------------------------------------------- lookup
    def lookup(self, table: int, pkt: dict) -> Flow | None:
        """The entry of ``table`` that ``pkt`` hits, None on a table miss.

        Raises:
            FakeOFTableError: two entries of the same priority match (ambiguous).
        """
        hits = [f for f in self.tables.get(table, []) if matches(f.match, pkt)]
        if not hits:
            return None
        best = max(f.priority for f in hits)
        top = [f for f in hits if f.priority == best]
        if len(top) > 1:
            raise FakeOFTableError(f"{self.name} table {table}: {len(top)} entries of priority {best} match {pkt}: "
                                   + "; ".join(f.to_ofctl() for f in top))
        return top[0]

    def fate(self, in_port: int, **fields) -> Fate:
        """Run a packet arriving on ``in_port`` (other header fields as keyword arguments, see the module doc)
        through the pipeline from table 0."""
        pkt = packet(in_port=in_port, **fields)
        res, table = Fate(), 0
        while True:
            f = self.lookup(table, pkt)
            if f is None:
                res.miss = table
                return res
            res.hits.append((table, f))
            nxt = None
            for a in f.actions:
                if isinstance(a, Meter):
                    res.meters.append(a.meter_id)
                elif isinstance(a, GotoTable):
                    if a.table <= table:
                        raise FakeOFTableError(f"{self.name}: goto_table:{a.table} from table {table} (not forward)")
                    nxt = a.table
                elif isinstance(a, Output):
                    port = pkt["in_port"] if a.port == OFPP_IN_PORT else a.port
                    if a.port != pkt["in_port"]:
                        res.outputs.append((port, _leaving(pkt)))
                else:
                    apply_action(pkt, a)
            if nxt is None:
                return res
            table = nxt


class FakeOFNetwork:
    """Several fake switches joined by patch ports (OVS ``type=patch``: what leaves one side enters the other).

    Args:
        switches: ``{name: FakeOFTable}``.
        patches: ``[((switch, port), (switch, port)), ...]``, both directions.
    """

    def __init__(self, switches: dict[str, FakeOFTable], patches=()):
        self.switches = switches
        self.peer = {}
        for a, b in patches:
            self.peer[a], self.peer[b] = b, a

    def fate(self, switch: str, in_port: int, max_hops: int = 16, **fields) -> "NetFate":
        """Follow a packet entering ``switch`` on ``in_port`` through patch ports until it leaves the network.

        Raises:
            FakeOFTableError: more than ``max_hops`` switch traversals (a loop).
        """
        res = NetFate()
        todo = [(switch, packet(in_port=in_port, **fields), 0)]
        while todo:
            sw, pkt, hops = todo.pop(0)
            if hops >= max_hops:
                raise FakeOFTableError(f"packet still looping after {max_hops} switches: {pkt}")
            f = self.switches[sw].fate(**pkt)
            res.hits += [(sw, t, fl) for t, fl in f.hits]
            res.meters += [(sw, m) for m in f.meters]
            if f.miss is not None:
                res.misses.append((sw, f.miss))
            for port, out in f.outputs:
                nxt = self.peer.get((sw, port))
                if nxt is None:
                    res.outputs.append((sw, port, out))
                else:
                    out = {k: v for k, v in out.items() if k not in ("vlan_vid", "queue_id")}
                    out["in_port"] = nxt[1]
                    todo.append((nxt[0], out, hops + 1))
        return res


@dataclass
class NetFate:
    """Where a packet left a :class:`FakeOFNetwork`: ``outputs`` ``[(switch, port, packet)]`` on ports that are not
    patches; ``meters`` ``[(switch, id)]``; ``hits`` ``[(switch, table, Flow)]``; ``misses`` ``[(switch, table)]``."""

    outputs: list = field(default_factory=list)
    meters: list = field(default_factory=list)
    hits: list = field(default_factory=list)
    misses: list = field(default_factory=list)

    @property
    def ports(self) -> list:
        return [(s, p) for s, p, _ in self.outputs]

    @property
    def dropped(self) -> bool:
        return not self.outputs

    def on(self, switch: str, port: int) -> dict:
        got = [p for s, q, p in self.outputs if (s, q) == (switch, port)]
        assert len(got) == 1, f"{len(got)} packets left {switch} port {port}: {self.outputs}"
        return got[0]


# ------------------------------------------------------------------------------------- ovs-ofctl text, FLOW_MODs
_MATCH = {"in_port": ("in_port", int), "dl_type": ("eth_type", lambda v: int(v, 0)),
          "mpls_label": ("mpls_label", int), "dl_src": ("eth_src", str), "dl_dst": ("eth_dst", str),
          "nw_proto": ("ip_proto", int), "nw_src": ("ipv4_src", str), "nw_dst": ("ipv4_dst", str),
          "tcp_src": ("tcp_src", int), "tcp_dst": ("tcp_dst", int), "udp_src": ("udp_src", int),
          "udp_dst": ("udp_dst", int), "tun_id": ("tunnel_id", lambda v: int(v, 0))}


def _parse_action(a: str):
    if a.startswith("output:"):
        return Output(int(a[7:]))
    if a.startswith("CONTROLLER:"):
        return Output(of.OFPP_CONTROLLER, int(a[11:]))
    if a == "pop_vlan":
        return PopVlan()
    if a.startswith("push_vlan:"):
        return PushVlan(int(a[10:], 0))
    m = re.fullmatch(r"set_field:(.+)->(\w+)", a)
    if m:
        val, name = m.groups()
        name = {"tun_id": "tunnel_id"}.get(name, name)
        return SetField(name, val if ":" in val else int(val, 0))
    for prefix, cls in (("meter:", Meter), ("set_queue:", SetQueue), ("goto_table:", GotoTable)):
        if a.startswith(prefix):
            return cls(int(a[len(prefix):]))
    if a.startswith("push_mpls:"):
        return PushMpls(int(a[10:], 0))
    if a.startswith("pop_mpls:"):
        return PopMpls(int(a[9:], 0))
    m = re.fullmatch(r"encap\((\w+)\)", a)
    if m:
        return Encap(m.group(1))
    if a == "decap()":
        return Decap()
    m = re.fullmatch(r"decap\(packet_type\(ns=(\d+),type=(\w+)\)\)", a)
    if m:
        return Decap((int(m.group(1)) << 16) | int(m.group(2), 0))
    raise FakeOFTableError(f"ovs-ofctl action {a!r} not modelled")


def parse_ofctl(line: str) -> Flow:
    """One ``ovs-ofctl add-flow`` line (the vocabulary :meth:`Flow.to_ofctl` writes) as a :class:`Flow`, so a test
    can run the exact text HARMLESS hands to OVS.

    Raises:
        FakeOFTableError: a field or action this module does not model.
    """
    head, _, acts = line.strip().partition("actions=")
    kw, m = {"cookie": 0, "table": 0, "priority": 32768, "idle_timeout": 0}, {}
    for item in filter(None, (x.strip() for x in head.split(","))):
        k, _, v = item.partition("=")
        if k in kw:
            kw[k] = int(v, 0)
        elif k == "dl_vlan":
            m["vlan_vid"] = of.OFPVID_PRESENT | int(v)
        elif k == "vlan_tci" and v.lower() == "0x0000/0x1fff":
            m["vlan_vid"] = of.OFPVID_NONE
        elif k in _MATCH:
            name, conv = _MATCH[k]
            m[name] = conv(v)
        else:
            raise FakeOFTableError(f"ovs-ofctl match field {k!r} not modelled")
    actions = () if acts.strip() == "drop" else tuple(_parse_action(a) for a in _split_actions(acts.strip()))
    return Flow(kw["priority"], Match(**m), actions, kw["cookie"], kw["table"], kw["idle_timeout"])


def _split_actions(text: str) -> list[str]:
    """Split an action list at the commas outside parentheses (``decap(packet_type(ns=0,type=0))`` is one)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return out + ([cur] if cur else [])


def _action_of(a):
    """A typed action from an os-ken action object."""
    name = type(a).__name__
    if name == "OFPActionOutput":
        return Output(a.port, a.max_len if a.port == of.OFPP_CONTROLLER else of.OFPCML_NO_BUFFER)
    if name == "OFPActionPushVlan":
        return PushVlan(a.ethertype)
    if name == "OFPActionPopVlan":
        return PopVlan()
    if name == "OFPActionSetField":
        return SetField(a.key, a.value)
    if name == "OFPActionSetQueue":
        return SetQueue(a.queue_id)
    if name == "OFPActionPushMpls":
        return PushMpls(a.ethertype)
    if name == "OFPActionPopMpls":
        return PopMpls(a.ethertype)
    if name == "NXActionEncap":
        return Encap({of.PT_MPLS: "mpls", of.PT_ETH: "ethernet"}[a.new_pkt_type])
    if name == "NXActionDecap":
        return Decap(a.new_pkt_type)
    raise FakeOFTableError(f"os-ken action {name} not modelled")


def flow_of_flowmod(m) -> Flow:
    """The :class:`Flow` an os-ken OFPFC_ADD FLOW_MOD installs (meter, apply-actions, goto-table instructions)."""
    acts = []
    for inst in m.instructions:
        name = type(inst).__name__
        if name == "OFPInstructionMeter":
            acts.insert(0, Meter(inst.meter_id))
        elif name == "OFPInstructionActions":
            acts += [_action_of(a) for a in inst.actions]
        elif name == "OFPInstructionGotoTable":
            acts.append(GotoTable(inst.table_id))
        else:
            raise FakeOFTableError(f"instruction {name} not modelled")
    return Flow(m.priority, Match(**dict(m.match.items())), tuple(acts), m.cookie, m.table_id, m.idle_timeout)


class FakeDatapath:
    """What an os-ken app touches of a datapath: ``id``, ``ofproto``/``ofproto_parser`` (OpenFlow 1.3), ``send_msg``
    (recorded in ``sent``) and ``set_xid``. With :meth:`FakeOFTable.apply_ofmsgs` a test runs a controller app's
    handlers and then asks the fake table where packets go."""

    def __init__(self, dpid: int = 1):
        from os_ken.ofproto import ofproto_v1_3, ofproto_v1_3_parser
        self.id = dpid
        self.ofproto, self.ofproto_parser = ofproto_v1_3, ofproto_v1_3_parser
        self.sent: list = []
        self._xid = 0

    def set_xid(self, msg) -> None:
        self._xid += 1
        msg.set_xid(self._xid)

    def send_msg(self, msg) -> None:
        self.sent.append(msg)
