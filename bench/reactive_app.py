"""A reactive os-ken app for the flow-setup benchmark (``harmless bench``, control plane): every new 5-tuple
goes to the controller once.

Table 0: priority 0 table-miss -> CONTROLLER (whole frame, OFPCML_NO_BUFFER); on PACKET_IN of an IPv4 frame the
app installs ``in_port, ip, nw_src, nw_dst, ip_proto, L4 ports -> output:<other port>`` (FLOW_MOD, cookie
:data:`COOKIE`) and returns the frame by PACKET_OUT, so the first packet of a flow takes PACKET_IN -> FLOW_MOD ->
PACKET_OUT and the following ones the datapath. Ports: 7 <-> 10 (the benchmark's two legacy ports; the same
numbers on br-of and on the plain bridge). Run: ``osken-manager harmless.bench.reactive_app``.
"""
from os_ken.lib.packet import ipv4, packet, tcp, udp

from harmless import openflow as of
from harmless.pipelines import learning_switch as ls

COOKIE = 0x5EAC7
OTHER = {7: 10, 10: 7}


def five_tuple_flow(in_port: int, data: bytes, out: int) -> of.Flow | None:
    """``in_port, ip, nw_src, nw_dst, ip_proto[, L4 ports] -> output:out`` for an IPv4 frame (None otherwise):
    priority 10, cookie :data:`COOKIE`, no timeout."""
    pkt = packet.Packet(data)
    ip = pkt.get_protocol(ipv4.ipv4)
    if ip is None:
        return None
    fields = dict(in_port=in_port, eth_type=of.ETH_TYPE_IPV4, ipv4_src=ip.src, ipv4_dst=ip.dst, ip_proto=ip.proto)
    l4 = pkt.get_protocol(udp.udp) or pkt.get_protocol(tcp.tcp)
    if isinstance(l4, udp.udp):
        fields.update(udp_src=l4.src_port, udp_dst=l4.dst_port)
    elif isinstance(l4, tcp.tcp):
        fields.update(tcp_src=l4.src_port, tcp_dst=l4.dst_port)
    return of.Flow(ls.LEARNED_PRIORITY, of.match(**fields), (of.output_port(out),), COOKIE)


class ReactiveForwarder(ls.LearningSwitch13):
    """Per-5-tuple reactive forwarding between ports 7 and 10 (counts PACKET_INs in ``packet_ins``): the learning
    switch's plumbing (table-miss, FLOW_MOD then PACKET_OUT) with another decision."""

    COOKIE = COOKIE

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.packet_ins = 0

    def connect_messages(self, dp) -> list:
        """Only the table-miss entry (the benchmark's bridges start empty)."""
        return [ls.table_miss(COOKIE).to_flowmod(dp)]

    def decide(self, dpid: int, in_port: int, data: bytes):
        out = OTHER.get(in_port)
        if out is None:
            return None, None
        self.packet_ins += 1
        return out, five_tuple_flow(in_port, data, out)
