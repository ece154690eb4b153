"""A tiny os-ken OpenFlow 1.3 app for tests: sends OFPT_PORT_MOD messages on command, as a controller does.

Run it beside ``portlog.py`` in one ``osken-manager`` (one OpenFlow connection): the port-mods then come from the
connection whose port-status messages ``portlog.py`` logs, as with Faucet's ``ofctl_rest`` in Faucet's own process.

Commands: lines ``<dpid> <port> <config> <mask>`` (integers, ``0x`` allowed) appended to the file named by
``HARMLESS_PORTMOD_CMD`` (default ``portmod.cmd``); the app reads new lines every 20 ms and sends one OFPPortMod each,
with the hardware address from the port's latest description or port-status (OpenFlow 1.3 §7.3.4.3: it must match
the port's ``hw_addr``, Open vSwitch refuses a port-mod with another one) and ``advertise`` 0 (unchanged), followed by
a barrier. What it sent is appended to ``HARMLESS_PORTMOD_LOG`` (default ``portmod.jsonl``): ``{"ev": "sent", "dpid",
"port", "config", "mask", "hw_addr", "t"}``; an OFPT_ERROR reply as ``{"ev": "error", "type", "code", "t"}``.
"""
import json
import os
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_3


class PortMod(app_manager.OSKenApp):
    """Send the port-mods written to ``HARMLESS_PORTMOD_CMD``."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cmd = os.environ.get("HARMLESS_PORTMOD_CMD", "portmod.cmd")
        self.out = os.environ.get("HARMLESS_PORTMOD_LOG", "portmod.jsonl")
        self.dps, self.hw = {}, {}
        self.done = 0
        hub.spawn(self._loop)

    def _log(self, **rec):
        rec["t"] = time.time()
        with open(self.out, "a") as f:
            f.write(json.dumps(rec) + "\n")

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        self.dps[dp.id] = dp
        dp.send_msg(dp.ofproto_parser.OFPPortDescStatsRequest(dp, 0))

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def port_desc(self, ev):
        for p in ev.msg.body:
            self.hw[(ev.msg.datapath.id, p.port_no)] = p.hw_addr

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status(self, ev):
        d = ev.msg.desc
        self.hw[(ev.msg.datapath.id, d.port_no)] = d.hw_addr

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error(self, ev):
        self._log(ev="error", type=ev.msg.type, code=ev.msg.code)

    def _loop(self):
        while True:
            hub.sleep(0.02)
            try:
                with open(self.cmd) as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            for line in lines[self.done:]:
                self.done += 1
                if line.strip():
                    self._send(*(int(x, 0) for x in line.split()))

    def _send(self, dpid, port, config, mask):
        dp = self.dps.get(dpid)
        if dp is None:
            self._log(ev="error", type="no datapath", code=dpid)
            return
        hw = self.hw.get((dpid, port), "00:00:00:00:00:00")
        p = dp.ofproto_parser
        dp.send_msg(p.OFPPortMod(dp, port_no=port, hw_addr=hw, config=config, mask=mask, advertise=0))
        dp.send_msg(p.OFPBarrierRequest(dp))
        self._log(ev="sent", dpid=dpid, port=port, config=config, mask=mask, hw_addr=hw)
