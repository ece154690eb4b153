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

from harmless import openflow as of

#: cookie of the learning-switch flows ("LEARN" in ASCII)
COOKIE = 0x4C4541524E
IDLE_TIMEOUT_S = 300
LEARNED_PRIORITY = 10


def table_miss(cookie: int) -> of.Flow:
    """Table 0, priority 0, match all -> CONTROLLER with the whole frame (OpenFlow 1.3.5 §5.4 "Table-miss")."""
    return of.Flow(0, of.Match(), (of.output_controller(),), cookie)


def learned_flow(in_port: int, eth_dst: str, out_port: int, cookie: int = COOKIE,
                 idle_timeout: int = IDLE_TIMEOUT_S) -> of.Flow:
    """``in_port, eth_dst -> output:out_port`` at priority :data:`LEARNED_PRIORITY` (expires ``idle_timeout`` s
    after its last hit)."""
    return of.Flow(LEARNED_PRIORITY, of.match(in_port=in_port, eth_dst=eth_dst), (of.output_port(out_port),), cookie,
                   idle_timeout=idle_timeout)


def learn(mac_to_port: dict[str, int], in_port: int, src: str, dst: str) -> int | None:
    """Record that ``src`` lives behind ``in_port``; return the port of ``dst`` if known, None (flood) if not."""
    mac_to_port[src] = in_port
    return mac_to_port.get(dst)


class LearningSwitch13(app_manager.OSKenApp):
    """MAC learning per datapath; state: ``mac_to_port[dpid][mac] = port``.

    The PACKET_IN plumbing (FLOW_MOD of the decided flow, then PACKET_OUT of the frame) is shared with apps that
    decide differently: they override :meth:`decide` (``harmless.bench.reactive_app`` does, per 5-tuple).
    """

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    COOKIE = COOKIE

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port: dict[int, dict[str, int]] = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        dp = ev.msg.datapath
        for m in self.connect_messages(dp):
            dp.send_msg(m)
        self.logger.info("datapath %016x connected", dp.id)

    def connect_messages(self, dp) -> list:
        """What a switch gets when it connects: delete every flow, then the table-miss entry."""
        return [of.delete_all(dp), table_miss(self.COOKIE).to_flowmod(dp)]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def role_handler(self, ev):
        """Ask for the role named by ``HARMLESS_OF_ROLE`` (unset: keep OVS's default, equal)."""
        role = os.environ.get("HARMLESS_OF_ROLE", "").lower()
        if not role:
            return
        dp = ev.msg.datapath
        dp.send_msg(of.role_request(dp, role, int(os.environ.get("HARMLESS_OF_GENERATION", "1"))))
        self.logger.info("datapath %016x: requested role %s", dp.id, role)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status_handler(self, ev):
        msg = ev.msg
        ofp = msg.datapath.ofproto
        reason = {ofp.OFPPR_ADD: "ADD", ofp.OFPPR_DELETE: "DELETE", ofp.OFPPR_MODIFY: "MODIFY"}.get(msg.reason,
                                                                                                    str(msg.reason))
        self.logger.info("port-status dpid=%016x port=%d reason=%s config=%#x state=%#x", msg.datapath.id,
                         msg.desc.port_no, reason, msg.desc.config, msg.desc.state)

    def decide(self, dpid: int, in_port: int, data: bytes) -> tuple[int | None, of.Flow | None]:
        """For a PACKET_IN: ``(port to send the frame to or None to ignore it, flow to install or None)``.
        LLDP is ignored; an unknown destination is flooded without a flow."""
        eth = packet.Packet(data).get_protocols(ethernet.ethernet)
        if not eth or eth[0].ethertype == ether_types.ETH_TYPE_LLDP:
            return None, None
        src, dst = eth[0].src, eth[0].dst
        out = learn(self.mac_to_port.setdefault(dpid, {}), in_port, src, dst)
        if out is None:
            return of.OFPP_FLOOD, None
        return out, learned_flow(in_port, dst, out, self.COOKIE)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        dp = msg.datapath
        in_port = msg.match["in_port"]
        out, flow = self.decide(dp.id, in_port, msg.data)
        if out is None:
            return
        if flow is not None:
            dp.send_msg(flow.to_flowmod(dp))
        data = msg.data if msg.buffer_id == dp.ofproto.OFP_NO_BUFFER else None
        dp.send_msg(of.packet_out(dp, [of.output_port(out)], data, in_port=in_port, buffer_id=msg.buffer_id))
