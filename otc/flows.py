"""OpenFlow Translator Component (OTC) flow builders: pure functions, no OVS needed.

The translator bridge ``br-otc`` maps VIDs on a trunk to patch ports and back (HARMLESS paper, Sec. II.B, Fig. 2):

    in_port=<trunk>, dl_vlan=<vid>  ->  pop_vlan, output:<patch of that port>
    in_port=<patch>                 ->  push_vlan:0x8100, set_field:<0x1000|vid>->vlan_vid, output:<trunk>

QinQ (802.1ad) ports use the same two flows: ``dl_vlan`` matches the OUTER tag (the S-tag, TPID 0x88a8 or 0x8100),
``pop_vlan`` removes only it, so the customer's C-tag reaches br-of untouched; on the way back the S-tag is pushed
with the switch's S-tag TPID outside the C-tag. OVS parses the second tag only with
``Open_vSwitch:other_config:vlan-limit`` >= 2 (ovs-vswitchd.conf.db(5)), which :mod:`.bridges` sets for such plans.

Every OTC flow carries :data:`OTC_COOKIE` so HARMLESS's flows are recognisable in any dump.
Port numbering on br-otc (stable, from the plan): the patch towards br-of port N of the i-th switch of the inventory
(1-based, ``SwitchPlan.index``)
is ``i*1000 + N``; the i-th switch's t-th trunk (0-based) is ``i*1000 + 900 + t``. Hence ``ofport`` <= 899.
"""
from __future__ import annotations

from dataclasses import dataclass

from harmless.plan import Plan, SwitchPlan

#: "HARMLESS" in ASCII: the cookie of every translator flow.
OTC_COOKIE = 0x4841524D4C455353
#: OFPVID_PRESENT (OpenFlow 1.3 spec, 7.2.3.8): set in vlan_vid when a tag is present.
OFPVID_PRESENT = 0x1000
TPID_8021Q = 0x8100
#: IEEE 802.1ad S-tag TPID.
TPID_8021AD = 0x88A8

OTC_BRIDGE = "br-otc"


@dataclass(frozen=True)
class Flow:
    """One OpenFlow flow entry in ovs-ofctl terms.

    Attributes:
        priority: 0..65535.
        match: ordered (field, value) pairs, e.g. ``(("in_port", "1901"), ("dl_vlan", "107"))``.
        actions: ordered action strings, e.g. ``("pop_vlan", "output:1007")``; empty means drop.
        cookie: 64-bit cookie.
        table: table id.
    """

    priority: int
    match: tuple[tuple[str, str], ...]
    actions: tuple[str, ...]
    cookie: int = OTC_COOKIE
    table: int = 0

    def to_ofctl(self) -> str:
        """Render as one ``ovs-ofctl add-flow``/``replace-flows`` line."""
        m = ",".join(f"{k}={v}" for k, v in self.match)
        acts = ",".join(self.actions) if self.actions else "drop"
        return f"cookie={self.cookie:#x},table={self.table},priority={self.priority}" + (f",{m}" if m else "") + \
            f",actions={acts}"


def pop_vlan_act() -> str:
    """Remove the outer 802.1Q tag."""
    return "pop_vlan"


def push_vlan_acts(vid: int, tpid: int = TPID_8021Q) -> tuple[str, str]:
    """Push a tag with ``tpid`` and set its VID (OpenFlow 1.3: push_vlan then set_field vlan_vid|OFPVID_PRESENT)."""
    if not 1 <= vid <= 4094:
        raise ValueError(f"VID {vid} outside 1..4094")
    return (f"push_vlan:{tpid:#06x}", f"set_field:{OFPVID_PRESENT | vid}->vlan_vid")


def output_act(port: int) -> str:
    return f"output:{port}"


def meter_act(meter_id: int) -> str:
    """Apply OpenFlow meter ``meter_id`` (OpenFlow 1.3 meter instruction; first in the action list)."""
    return f"meter:{meter_id}"


def set_queue_act(queue_id: int) -> str:
    """Select queue ``queue_id`` of the output port (OVS QoS/Queue rows; docs/qos.md)."""
    return f"set_queue:{queue_id}"


def patch_ofport(switch_index: int, ofport: int) -> int:
    """br-otc port number of the patch towards br-of port ``ofport`` of switch ``switch_index`` (1-based)."""
    if not 1 <= ofport <= 899:
        raise ValueError(f"OpenFlow port {ofport} outside 1..899 (br-otc numbering)")
    return switch_index * 1000 + ofport


def trunk_ofport(switch_index: int, trunk_index: int) -> int:
    """br-otc port number of trunk ``trunk_index`` (0-based) of switch ``switch_index`` (1-based)."""
    return switch_index * 1000 + 900 + trunk_index


def patch_names(switch: str, ofport: int) -> tuple[str, str]:
    """(br-otc side, br-of side) names of the patch pair for one migrated port."""
    return f"otc-{switch}-p{ofport}", f"{switch}-p{ofport}"


def switch_flows(sp: SwitchPlan, index: int) -> list[Flow]:
    """The translator flows for one switch (``index`` 1-based position in the plan)."""
    tr_no = {t.switch_port: trunk_ofport(index, k) for k, t in enumerate(sp.trunks)}
    flows = []
    for p in sp.ports:
        patch = patch_ofport(index, p.ofport)
        trunk = tr_no[p.trunk]
        q = getattr(p, "qos", None)      # per-port QoS (docs/qos.md): meter id = patch port, queue id = OF port
        ingress = (meter_act(patch),) if q is not None and q.ingress_mbps is not None else ()
        egress = (set_queue_act(p.ofport),) if q is not None and q.egress_mbps is not None else ()
        flows.append(Flow(100, (("in_port", str(trunk)), ("dl_vlan", str(p.vid))),
                          (*ingress, pop_vlan_act(), output_act(patch))))
        tpid = sp.stag_tpid if p.qinq else TPID_8021Q
        flows.append(Flow(100, (("in_port", str(patch)),),
                          (*egress, *push_vlan_acts(p.vid, tpid), output_act(trunk))))
    return flows


def translator_flows(plan: Plan) -> list[Flow]:
    """All br-otc flows for a plan, plus a priority-0 drop (counts what nobody claims)."""
    flows = []
    for i, sp in plan.numbered():
        flows += switch_flows(sp, i)
    flows.append(Flow(0, (), ()))
    return flows
