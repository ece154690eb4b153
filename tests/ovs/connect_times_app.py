"""os-ken app for the reconnect measurement (tests/ovs/test_controller_connection.py): one stdout line per datapath that
completes the OpenFlow handshake, ``CONNECTED dpid=<16 hex> t=<epoch seconds>``; it installs nothing."""
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3


class ConnectTimes(app_manager.OSKenApp):
    """Prints the wall-clock time of every FEATURES_REPLY (the end of the switch's handshake)."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        print(f"CONNECTED dpid={ev.msg.datapath.id:016x} t={time.time():.6f}", flush=True)
