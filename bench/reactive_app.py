"""A reactive os-ken app for the flow-setup benchmark (``harmless bench``, control plane): every new 5-tuple
goes to the controller once.

Table 0: priority 0 table-miss -> CONTROLLER (whole frame, OFPCML_NO_BUFFER); on PACKET_IN of an IPv4 frame the
app installs ``in_port, ip, nw_src, nw_dst, ip_proto, L4 ports -> output:<other port>`` (FLOW_MOD, cookie
:data:`COOKIE`) and returns the frame by PACKET_OUT, so the first packet of a flow takes PACKET_IN -> FLOW_MOD ->
PACKET_OUT and the following ones the datapath. Ports: 7 <-> 10 (the benchmark's two legacy ports; the same
numbers on br-of and on the plain bridge). Run: ``osken-manager harmless.bench.reactive_app``.
"""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ipv4, packet, tcp, udp
from os_ken.ofproto import ofproto_v1_3

COOKIE = 0x5EAC7
OTHER = {7: 10, 10: 7}


class ReactiveForwarder(app_manager.OSKenApp):
    """Per-5-tuple reactive forwarding between ports 7 and 10 (counts PACKET_INs in ``packet_ins``)."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.packet_ins = 0

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        dp.send_msg(parser.OFPFlowMod(datapath=dp, cookie=COOKIE, priority=0, match=parser.OFPMatch(),
                                      instructions=[parser.OFPInstructionActions(
                                          ofp.OFPIT_APPLY_ACTIONS,
                                          [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)])]))
        self.logger.info("datapath %016x connected", dp.id)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match["in_port"]
        out = OTHER.get(in_port)
        if out is None:
            return
        self.packet_ins += 1
        pkt = packet.Packet(msg.data)
        ip = pkt.get_protocol(ipv4.ipv4)
        if ip is not None:
            fields = dict(in_port=in_port, eth_type=0x0800, ipv4_src=ip.src, ipv4_dst=ip.dst, ip_proto=ip.proto)
            l4 = pkt.get_protocol(udp.udp) or pkt.get_protocol(tcp.tcp)
            if isinstance(l4, udp.udp):
                fields.update(udp_src=l4.src_port, udp_dst=l4.dst_port)
            elif isinstance(l4, tcp.tcp):
                fields.update(tcp_src=l4.src_port, tcp_dst=l4.dst_port)
            dp.send_msg(parser.OFPFlowMod(datapath=dp, cookie=COOKIE, priority=10, match=parser.OFPMatch(**fields),
                                          instructions=[parser.OFPInstructionActions(
                                              ofp.OFPIT_APPLY_ACTIONS, [parser.OFPActionOutput(out)])]))
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
                                        actions=[parser.OFPActionOutput(out)], data=msg.data))
