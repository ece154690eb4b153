"""An OpenFlow 1.3 learning switch on os-ken: the controller app ``harmless demo`` runs on br-of.

It does not know HARMLESS exists (data-plane transparency): br-of port N is legacy port N, frames arrive untagged.

Pipeline (table 0):
  * priority 0: table-miss -> CONTROLLER (whole frame, OFPCML_NO_BUFFER).
  * priority 10: ``in_port=<p>, eth_dst=<mac>`` -> ``output:<port of mac>`` after the controller has learned where
    ``mac`` lives; idle_timeout 300 s. Unknown or broadcast destinations are flooded by PACKET_OUT.
Every flow carries cookie :data:`COOKIE`. Run: ``osken-manager --ofp-tcp-listen-port 6653 harmless.pipelines.learning_switch``.
"""
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
