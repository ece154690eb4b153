"""An OpenFlow 1.3 learning switch on os-ken: the controller app ``harmless demo`` runs on br-of.

It does not know HARMLESS exists (data-plane transparency): br-of port N is legacy port N, frames arrive untagged.

Pipeline (table 0):
  * priority 0: table-miss -> CONTROLLER (whole frame, OFPCML_NO_BUFFER).
  * priority 10: ``in_port=<p>, eth_dst=<mac>`` -> ``output:<port of mac>`` after the controller has learned where
    ``mac`` lives; idle_timeout 300 s. Unknown or broadcast destinations are flooded by PACKET_OUT.
Every flow carries cookie :data:`COOKIE`. Run: ``osken-manager --ofp-tcp-listen-port 6653 harmless.pipelines.learning_switch``.

Controller redundancy (OpenFlow 1.3 spec, 6.3.7 "Multiple Controllers"): with ``HARMLESS_OF_ROLE=master|slave|equal``
in its environment the app asks every switch for that role (OFPT_ROLE_REQUEST, generation id from
``HARMLESS_OF_GENERATION``, default 1) when it connects; a slave gets no PACKET_INs and may not modify flows, so two
instances (master + slave, or two equals) can serve one br-of. Port-status messages (e.g. HARMLESS's link-state
mirroring) are logged as ``port-status dpid=... port=N reason=... config=0x.. state=0x..``.
"""
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, ether_types, packet
from os_ken.ofproto import ofproto_v1_3

#: cookie of the learning-switch flows ("LEARN" in ASCII)
COOKIE = 0x4C4541524E
IDLE_TIMEOUT_S = 300


class LearningSwitch13(app_manager.OSKenApp):
    """MAC learning per datapath; state: ``mac_to_port[dpid][mac] = port``."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port: dict[int, dict[str, int]] = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        dp.send_msg(parser.OFPFlowMod(datapath=dp, command=ofp.OFPFC_DELETE, table_id=ofp.OFPTT_ALL,
                                      out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY))
        self._add_flow(dp, 0, parser.OFPMatch(), [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)],
                       idle=0)
        self.logger.info("datapath %016x connected", dp.id)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def role_handler(self, ev):
        """Ask for the role named by ``HARMLESS_OF_ROLE`` (unset: keep OVS's default, equal)."""
        role = os.environ.get("HARMLESS_OF_ROLE", "").lower()
        if not role:
            return
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        code = {"master": ofp.OFPCR_ROLE_MASTER, "slave": ofp.OFPCR_ROLE_SLAVE, "equal": ofp.OFPCR_ROLE_EQUAL}[role]
        dp.send_msg(parser.OFPRoleRequest(dp, code, int(os.environ.get("HARMLESS_OF_GENERATION", "1"))))
        self.logger.info("datapath %016x: requested role %s", dp.id, role)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status_handler(self, ev):
        msg = ev.msg
        ofp = msg.datapath.ofproto
        reason = {ofp.OFPPR_ADD: "ADD", ofp.OFPPR_DELETE: "DELETE", ofp.OFPPR_MODIFY: "MODIFY"}.get(msg.reason,
                                                                                                    str(msg.reason))
        self.logger.info("port-status dpid=%016x port=%d reason=%s config=%#x state=%#x", msg.datapath.id,
                         msg.desc.port_no, reason, msg.desc.config, msg.desc.state)

    def _add_flow(self, dp, priority, match, actions, idle=IDLE_TIMEOUT_S):
        ofp, parser = dp.ofproto, dp.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        dp.send_msg(parser.OFPFlowMod(datapath=dp, cookie=COOKIE, priority=priority, match=match,
                                      instructions=inst, idle_timeout=idle))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocols(ethernet.ethernet)
        if not eth or eth[0].ethertype == ether_types.ETH_TYPE_LLDP:
            return
        src, dst = eth[0].src, eth[0].dst
        table = self.mac_to_port.setdefault(dp.id, {})
        table[src] = in_port
        out_port = table.get(dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            self._add_flow(dp, 10, parser.OFPMatch(in_port=in_port, eth_dst=dst), actions)
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id, in_port=in_port,
                                        actions=actions, data=data))
