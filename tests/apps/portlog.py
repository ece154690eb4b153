"""A tiny os-ken OpenFlow 1.3 app for tests: logs what a controller learns about ports, one JSON object a line.

The file is named by ``HARMLESS_PORTLOG`` (default ``portlog.jsonl`` in the working folder). Lines:

* ``{"ev": "connected", "dpid", "t"}`` when a switch connects (features reply);
* ``{"ev": "port_desc", "dpid", "ports": {no: {"name", "hw_addr", "config", "state"}}, "t"}`` the port description at connect;
* ``{"ev": "port_status", "dpid", "port", "name", "hw_addr", "reason": "ADD"|"DELETE"|"MODIFY", "config", "state",
  "link_down", "live", "t"}`` for every OFPT_PORT_STATUS (``config``/``state`` are the raw bit fields);
* ``{"ev": "flow_removed", "dpid", "cookie", "reason", "t"}`` for every OFPT_FLOW_REMOVED.

``t`` is ``time.time()`` (s, wall clock) when os-ken handed the message to the app.
The app installs nothing; it only listens (a test adds its own flows).
"""
import json
import os
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3


class PortLog(app_manager.OSKenApp):
    """Append port-related OpenFlow events of every datapath to ``HARMLESS_PORTLOG``."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.path = os.environ.get("HARMLESS_PORTLOG", "portlog.jsonl")

    def _log(self, **rec):
        rec["t"] = time.time()
        with open(self.path, "a") as f:
            f.write(json.dumps(rec) + "\n")

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        self._log(ev="connected", dpid=dp.id)
        dp.send_msg(dp.ofproto_parser.OFPPortDescStatsRequest(dp, 0))

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def port_desc(self, ev):
        ports = {p.port_no: {"name": p.name.decode(), "hw_addr": p.hw_addr, "config": p.config, "state": p.state}
                 for p in ev.msg.body}
        self._log(ev="port_desc", dpid=ev.msg.datapath.id, ports=ports)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status(self, ev):
        msg = ev.msg
        ofp = msg.datapath.ofproto
        reason = {ofp.OFPPR_ADD: "ADD", ofp.OFPPR_DELETE: "DELETE", ofp.OFPPR_MODIFY: "MODIFY"}.get(msg.reason,
                                                                                                    str(msg.reason))
        d = msg.desc
        self._log(ev="port_status", dpid=msg.datapath.id, port=d.port_no, name=d.name.decode(), reason=reason,
                  hw_addr=d.hw_addr, config=d.config, state=d.state, link_down=bool(d.state & ofp.OFPPS_LINK_DOWN),
                  live=bool(d.state & ofp.OFPPS_LIVE))

    @set_ev_cls(ofp_event.EventOFPFlowRemoved, MAIN_DISPATCHER)
    def flow_removed(self, ev):
        self._log(ev="flow_removed", dpid=ev.msg.datapath.id, cookie=ev.msg.cookie, reason=ev.msg.reason)
