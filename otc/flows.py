"""OpenFlow Translator Component (OTC) flow builders: pure functions, no OVS needed.

The translator bridge ``br-otc`` maps VIDs on a trunk to patch ports and back (HARMLESS paper, Sec. II.B, Fig. 2):

    in_port=<trunk>, dl_vlan=<vid>  ->  pop_vlan, output:<patch of that port>
    in_port=<patch>                 ->  push_vlan:0x8100, set_field:<0x1000|vid>->vlan_vid, output:<trunk>

QinQ (802.1ad) ports use the same two flows: ``dl_vlan`` matches the OUTER tag (the S-tag, TPID 0x88a8 or 0x8100),
``pop_vlan`` removes only it, so the customer's C-tag reaches br-of untouched; on the way back the S-tag is pushed
with the switch's S-tag TPID outside the C-tag. OVS parses the second tag only with
``Open_vSwitch:other_config:vlan-limit`` >= 2 (ovs-vswitchd.conf.db(5)), which :mod:`.bridges` sets for such plans.

Link-local protocols a port has tunnelled (``PortPlan.l2pt``, docs/transparency.md): where the legacy switch rewrites
their destination MAC to ``SwitchPlan.l2pt_mac`` (Cisco/Junos 01:00:0c:cd:cd:d0), two more flows per protocol class
at priority 110 undo it on the way in and redo it on the way out (:func:`l2pt_flows`), so br-of and the host both see
the real destination (01:80:c2:00:00:0e for LLDP, ...).

The flows are :class:`harmless.openflow.Flow` objects (typed match and actions); ``bridges`` writes their
:meth:`~harmless.openflow.Flow.to_ofctl` text into one OpenFlow bundle. Every OTC flow carries :data:`OTC_COOKIE`
so HARMLESS's flows are recognisable in any dump.
Port numbering on br-otc (stable, from the plan): the patch towards br-of port N of the i-th switch of the inventory
(1-based, ``SwitchPlan.index``)
is ``i*1000 + N``; the i-th switch's t-th trunk (0-based) is ``i*1000 + 900 + t``. Hence ``ofport`` <= 899.
"""
from __future__ import annotations

from harmless.openflow import (TPID_8021Q, Flow, match, meter_act, output_port, pop_vlan, push_vlan_act, set_field,
                               set_queue, vid_present)
from harmless.plan import Plan, PortPlan, SwitchPlan
from harmless.switch_drivers.l2pt import restore_groups, tunnel_dsts

#: "HARMLESS" in ASCII: the cookie of every translator flow.
OTC_COOKIE = 0x4841524D4C455353

OTC_BRIDGE = "br-otc"

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


#: priority of the link-local rewrite flows (above the port's own two at 100)
L2PT_PRIORITY = 110


def l2pt_flows(p: PortPlan, tunnel_mac: str, trunk: int, patch: int, ingress: tuple, egress: tuple) -> list[Flow]:
    """The rewrite flows of one port whose link-local protocols ``p.l2pt`` the legacy switch tunnels with
    destination ``tunnel_mac`` (pure).

    In (trunk, the port's VID, destination ``tunnel_mac``, EtherType of a protocol class): the port's own ingress
    actions plus ``set_field`` of the real destination before the output to br-of. Which destination is given back
    comes from the EtherType alone (:func:`~harmless.switch_drivers.l2pt.restore_groups`: 0x88cc LLDP
    01:80:c2:00:00:0e, 0x8809 slow protocols 01:80:c2:00:00:02, 0x05ff the one LLC protocol of the port).
    Out (from br-of, to a real destination of a tunnelled protocol): ``set_field`` of ``tunnel_mac`` before the port's
    own egress actions, so the legacy switch's tunnel port restores it towards the host.

    Args:
        p: the port's plan (``l2pt`` non-empty).
        tunnel_mac: the destination tunnelled PDUs carry on the trunk (``SwitchPlan.l2pt_mac``).
        trunk, patch: the br-otc port numbers of the port's trunk and patch.
        ingress: the port's actions before ``pop_vlan`` on the way in (its QoS meter), kept here.
        egress: the port's actions on the way out after the rewrite (its queue, the push of its VID), kept here.

    Raises:
        ValueError: protocols the EtherType cannot tell apart (the planner refuses such a port before).
    """
    flows = []
    for eth_type, dst, _names in restore_groups(p.l2pt):
        flows.append(Flow(L2PT_PRIORITY, match(in_port=trunk, vlan_vid=vid_present(p.vid), eth_type=eth_type,
                                               eth_dst=tunnel_mac),
                          (*ingress, pop_vlan(), set_field(eth_dst=dst), output_port(patch)), OTC_COOKIE))
    for dst, eth_type in tunnel_dsts(p.l2pt):
        flows.append(Flow(L2PT_PRIORITY, match(in_port=patch, eth_type=eth_type, eth_dst=dst),
                          (set_field(eth_dst=tunnel_mac), *egress, output_port(trunk)), OTC_COOKIE))
    return flows


def switch_flows(sp: SwitchPlan, index: int) -> list[Flow]:
    """The translator flows for one switch (``index`` 1-based position in the plan), all with :data:`OTC_COOKIE`."""
    tr_no = {t.switch_port: trunk_ofport(index, k) for k, t in enumerate(sp.trunks)}
    flows = []
    for p in sp.ports:
        patch = patch_ofport(index, p.ofport)
        trunk = tr_no[p.trunk]
        q = getattr(p, "qos", None)      # per-port QoS (docs/qos.md): meter id = patch port, queue id = OF port
        ingress = (meter_act(patch),) if q is not None and q.ingress_mbps is not None else ()
        egress = (set_queue(p.ofport),) if q is not None and q.egress_mbps is not None else ()
        flows.append(Flow(100, match(in_port=trunk, vlan_vid=vid_present(p.vid)),
                          (*ingress, pop_vlan(), output_port(patch)), OTC_COOKIE))
        tpid = sp.stag_tpid if p.qinq else TPID_8021Q
        push = push_vlan_act(p.vid, tpid)
        flows.append(Flow(100, match(in_port=patch), (*egress, *push, output_port(trunk)), OTC_COOKIE))
        if p.l2pt and sp.l2pt_mac:
            flows += l2pt_flows(p, sp.l2pt_mac, trunk, patch, ingress, egress + push)
    return flows


def translator_flows(plan: Plan) -> list[Flow]:
    """All br-otc flows for a plan, plus a priority-0 drop (counts what nobody claims)."""
    flows = []
    for i, sp in plan.numbered():
        flows += switch_flows(sp, i)
    flows.append(Flow(0, cookie=OTC_COOKIE))
    return flows
