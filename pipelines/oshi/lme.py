"""The OSHI node's Local Management Entity (LME) flows: coexistence of IP and SDN Based Paths by ethertype.

OSHI paper Sec. IV.A and Fig. 4. Installed by the node itself at start (``harmless oshi up`` writes them with
``ovs-ofctl`` into the node's bridge), never by the controller; the controller owns table 1 and adds end-point
classification flows in table 0 at :data:`SERVICE_PRIORITY` (above the LME's port bridging).

Table 0 (cookie :data:`LME_COOKIE`):
  * priority 300: LLDP (0x88cc) and BDDP (0x8942) -> CONTROLLER (topology discovery).
  * priority 200: MPLS unicast 0x8847 and multicast 0x8848 -> goto table 1 (the SBPs).
  * priority 100: physical port <-> its internal port (the Linux IP stack's interface, where FRR runs).
  * priority 0:   drop.
Table 1 (the controller's): table-miss drop (OpenFlow 1.3 default; written explicitly so it is visible).
"""
from __future__ import annotations

from harmless.openflow import Flow, flows_ofctl, goto_table, match, output_controller, output_port

#: "OSHLME" in ASCII: cookie of the node-local flows (the controller never deletes these).
LME_COOKIE = 0x4F53484C4D45
ETH_LLDP = 0x88CC
#: Broadcast Domain Discovery Protocol (Floodlight): LLDP payload, ethertype 0x8942, broadcast destination, so that
#: it crosses legacy L2 switches (which consume LLDP) -- needed on HARMLESS ports.
ETH_BDDP = 0x8942
ETH_MPLS = 0x8847
ETH_MPLS_MC = 0x8848
#: priority of the controller's end-point classification flows in table 0 (above LME bridging, below LLDP).
SERVICE_PRIORITY = 250
SBP_TABLE = 1


def lme_flows(port_pairs: dict[int, int]) -> list[Flow]:
    """The LME flows of one node.

    Args:
        port_pairs: physical OpenFlow port -> its internal port (both OpenFlow port numbers).

    Returns:
        Flows for tables 0 and 1, each with :data:`LME_COOKIE`.
    """
    c = LME_COOKIE
    flows = [Flow(300, match(eth_type=ETH_LLDP), (output_controller(),), c),
             Flow(300, match(eth_type=ETH_BDDP), (output_controller(),), c),
             Flow(200, match(eth_type=ETH_MPLS), (goto_table(SBP_TABLE),), c),
             Flow(200, match(eth_type=ETH_MPLS_MC), (goto_table(SBP_TABLE),), c)]
    for phys, internal in sorted(port_pairs.items()):
        flows.append(Flow(100, match(in_port=phys), (output_port(internal),), c))
        flows.append(Flow(100, match(in_port=internal), (output_port(phys),), c))
    flows.append(Flow(0, cookie=c))
    flows.append(Flow(0, cookie=c, table=SBP_TABLE))
    return flows


def lme_ofctl(port_pairs: dict[int, int]) -> str:
    """:func:`lme_flows` as ``ovs-ofctl add-flows`` input (one flow per line)."""
    return flows_ofctl(lme_flows(port_pairs))
