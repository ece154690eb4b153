"""Recorded output of real devices (``tests/drivers/recorded``: ntc-templates' and NAPALM's test data, source and
licence in each ``SOURCE.md``) replayed against our parsers. Every expected value was read off the capture by hand.

Where our driver reads a command through NAPALM (link state, counters), the capture goes through NAPALM's own getter
code with only the transport replaced (``_send_command`` / ``_run_commands`` / the PyEZ RPC), so the test covers
NAPALM's parsing of real output plus ours. No device, no network, no root.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from harmless.switch_drivers.eos import model as eos_model
from harmless.switch_drivers.eos.driver import EosDriver
from harmless.switch_drivers.ios import model as ios_model
from harmless.switch_drivers.ios import parse as ios_parse
from harmless.switch_drivers.ios.driver import IosDriver
from harmless.switch_drivers.junos.driver import JunosDriver
from harmless.switch_drivers.procurve import model as procurve_model
from harmless.switch_drivers.procurve import parse as procurve_parse

REC = Path(__file__).parent / "recorded"


def rec(path: str) -> str:
    return (REC / path).read_text()


def test_every_capture_has_its_source_beside_it():
    captures = [p for p in REC.rglob("*") if p.is_file() and p.name not in ("SOURCE.md", "README.md")]
    assert len(captures) >= 10
    for p in captures:
        source = (p.parent / "SOURCE.md").read_text()
        assert p.name in source and "Licence" in source, p


# ---------------------------------------------------------------------------------------------------------- IOS
def test_ios_show_interfaces_switchport_operational_state():
    ops = ios_parse.parse_switchport_operational(
        rec("ios/show_interfaces_switchport/ntc_cisco_ios_show_interfaces_switchport.txt"))
    assert list(ops) == ["Gi0/1", "Gi0/2", "Gi0/3", "Gi1/0", "Gi1/1", "Fa0/1"]
    # Gi0/1 is a static dot1q trunk carrying every VLAN, DTP off
    assert ops["Gi0/1"] == {"admin_mode": "trunk", "oper_mode": "trunk", "access_vlan": "1", "native_vlan": "1",
                            "trunking_vlans": ["ALL"], "negotiation": "Off"}
    # the others are "dynamic auto" ports that came up as access ports in their VLANs (DTP on)
    assert {k: (v["admin_mode"], v["oper_mode"], v["access_vlan"]) for k, v in ops.items() if k != "Gi0/1"} == {
        "Gi0/2": ("dynamic auto", "static access", "100"), "Gi0/3": ("dynamic auto", "static access", "101"),
        "Gi1/0": ("dynamic auto", "static access", "110"), "Gi1/1": ("dynamic auto", "static access", "111"),
        "Fa0/1": ("dynamic auto", "static access", "1")}
    assert all(v["negotiation"] == "On" for k, v in ops.items() if k != "Gi0/1")


def test_ios_show_interfaces_switchport_decides_the_trunk_encapsulation_line():
    # the Catalyst negotiates encapsulation (ISL-capable): "switchport trunk encapsulation dot1q" must come first
    isl = rec("ios/show_interfaces_switchport/ntc_cisco_ios_show_interfaces_switchport.txt")
    assert ios_parse.needs_trunk_encapsulation(isl, model="")
    # a dot1q-only port (the command does not exist there), whatever the model string says
    dot1q = rec("ios/show_interfaces_switchport/ntc_cisco_ios_show_interfaces_switchport3.txt")
    assert not ios_parse.needs_trunk_encapsulation(dot1q, model="WS-C3750X-48P")
    assert ios_parse.parse_switchport_operational(dot1q) == {"SM1/1": {
        "admin_mode": "dynamic auto", "oper_mode": "down", "access_vlan": "1", "native_vlan": "1",
        "trunking_vlans": ["ALL"], "negotiation": "On"}}


def test_ios_show_vtp_status_is_a_server():
    text = rec("ios/show_vtp_status/ntc_cisco_ios_show_vtp_status.txt")
    assert ios_model.vtp_mode_of(text) == "server"
    model = ios_model.parse_model(rec("ios/show_running-config/napalm_ios_csr1000v.txt"), {"show vtp status": text})
    assert model.vtp_mode == "server"


def test_ios_show_etherchannel_summary_members_with_full_names():
    members = ios_model._lag_members(rec("ios/show_etherchannel_summary/ntc_show_etherchannel_summary.txt"))
    assert members == {
        "TenGigabitEthernet6/4": "Port-channel1", "TenGigabitEthernet3/5": "Port-channel1",
        "TenGigabitEthernet9/4": "Port-channel1", "TenGigabitEthernet5/5": "Port-channel1",   # continuation line
        "TenGigabitEthernet4/2": "Port-channel3", "TenGigabitEthernet2/2": "Port-channel3",
        "TenGigabitEthernet3/3": "Port-channel7", "TenGigabitEthernet1/3": "Port-channel7",
        "TenGigabitEthernet2/8": "Port-channel13", "TenGigabitEthernet1/8": "Port-channel14",
        "TenGigabitEthernet2/10": "Port-channel51", "TenGigabitEthernet4/10": "Port-channel51"}


def test_ios_show_etherchannel_summary_tab_separated_layer3_bundle():
    text = rec("ios/show_etherchannel_summary/ntc_show_etherchannel_summary2.txt")
    assert ios_model._lag_members(text) == {"TenGigabitEthernet0/0/2": "Port-channel10",
                                            "TenGigabitEthernet0/0/3": "Port-channel10"}
    # derived from the capture (not recorded): a Catalyst 9000's 25G ports print as "Twe"; they used to be read as
    # "TwoGigabitEthernet" + "e1/0/1" (a prefix table of two letters), now as names.canonical_interface spells them
    twe = text.replace("Te0/0/2", "Twe1/0/1").replace("Te0/0/3", "Fi1/0/2")
    assert ios_model._lag_members(twe) == {"TwentyFiveGigE1/0/1": "Port-channel10",
                                           "FiveGigabitEthernet1/0/2": "Port-channel10"}


def test_ios_running_config_of_a_csr1000v_router():
    cfg = rec("ios/show_running-config/napalm_ios_csr1000v.txt")
    assert ios_model.is_router(cfg)
    model = ios_model.parse_model(cfg)
    ports = {p.interface: p for p in model.ports}
    assert list(ports) == ["Loopback0", "GigabitEthernet1", "GigabitEthernet2", "GigabitEthernet3"]
    assert all(p.mode == "routed" for p in model.ports)
    assert ports["GigabitEthernet1"].management                     # ip vrf forwarding MGMT
    assert not ports["GigabitEthernet2"].management
    assert ports["GigabitEthernet3"].shutdown and not ports["GigabitEthernet2"].shutdown
    assert ports["GigabitEthernet2"].unparsed == ("ip address 10.1.1.1 255.255.255.0", "negotiation auto")
    assert model.vlans == () and model.stp_mode is None             # a router: no VLANs, no spanning-tree mode line
    assert ios_parse.parse_port_states(cfg) == {} and ios_parse.parse_vlans(cfg) == {}


def _ios_over(show_interfaces: str) -> IosDriver:
    """Our IOS driver on NAPALM's IOSDriver whose CLI answers only ``show interfaces`` with the capture."""
    from napalm.ios.ios import IOSDriver

    def send(command: str) -> str:
        assert command == "show interfaces", command
        return show_interfaces

    napalm_dev = IOSDriver("192.0.2.1", "user", "unused")
    napalm_dev._send_command = send
    drv = IosDriver("192.0.2.1", 22, "user", "unused")
    drv._device = napalm_dev
    return drv


def test_ios_show_interfaces_link_states():
    drv = _ios_over(rec("ios/show_interfaces/napalm_ios_csr1000v.txt"))
    assert drv.link_states() == {"GigabitEthernet1": "up", "GigabitEthernet2": "up",
                                 "GigabitEthernet3": "admin-down", "GigabitEthernet4": "admin-down"}


# ---------------------------------------------------------------------------------------------------------- EOS
EOS_SHOW = {"show mlag": "eos/show_mlag/ntc_arista_eos_show_mlag.txt",
            "show port-channel summary": "eos/show_port-channel_summary/ntc_arista_eos_show_port-channel_summary.txt"}
#: hand-written (not recorded): just the interfaces the recorded ``show`` outputs talk about
EOS_CONFIG = """\
interface Ethernet5
!
interface Ethernet16
!
interface Ethernet17
!
interface Ethernet29
!
interface Ethernet54/1
!
interface Port-Channel10
   switchport mode trunk
!
"""


def test_eos_show_mlag_and_port_channel_summary_feed_the_port_model():
    show = {cmd: rec(path) for cmd, path in EOS_SHOW.items()}
    model = eos_model.parse_model(EOS_CONFIG, show)
    ports = {p.interface: p for p in model.ports}
    assert ports["Port-Channel10"].mlag_peer_link                   # peer-link : Port-Channel10
    assert not any(p.mlag_peer_link for n, p in ports.items() if n != "Port-Channel10")
    assert ports["Ethernet5"].lag == "Port-Channel105"
    assert ports["Ethernet16"].lag == ports["Ethernet17"].lag == "Port-Channel116"
    assert ports["Ethernet29"].lag == "Port-Channel125"              # listed on a continuation line
    assert ports["Ethernet54/1"].lag == "Port-Channel2000"           # the one bundle in use (U), member P/G/+


def test_eos_show_port_channel_summary_rows():
    rows = eos_model._show_rows("show port-channel summary", rec(EOS_SHOW["show port-channel summary"]))
    assert len(rows) == 19
    by_lag = {r["bundle_name"]: r["member_interface"] for r in rows}
    assert by_lag["Po146"] == ["Et43", "Et44", "Et45", "Et46", "Et47", "Et48", "Et49", "Et50"]
    assert by_lag["Po2000"] == ["Et54/1"]


def test_eos_show_port_channel_summary_without_channels():
    text = rec("eos/show_port-channel_summary/ntc_arista_eos_show_port-channel_summary_none.txt")
    assert eos_model._show_rows("show port-channel summary", text) == []
    model = eos_model.parse_model(EOS_CONFIG, {"show port-channel summary": text})
    assert not any(p.lag for p in model.ports)


def _eos_over(show_interfaces: dict) -> EosDriver:
    """Our EOS driver on NAPALM's EOSDriver whose eAPI answers only ``show interfaces`` with the capture."""
    from napalm.eos.eos import EOSDriver

    def run(commands, **_kw):
        assert commands == ["show interfaces"], commands
        return [show_interfaces]

    napalm_dev = EOSDriver("192.0.2.1", "user", "unused")
    napalm_dev._run_commands = run
    drv = EosDriver("192.0.2.1", 443, "user", "unused")
    drv._device = napalm_dev
    return drv


def test_eos_show_interfaces_link_states_and_counters():
    drv = _eos_over(json.loads(rec("eos/show_interfaces/napalm_eos_veos.json")))
    assert drv.link_states() == {n: "up" for n in ("Management1", "Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4",
                                                   "Ethernet5")}
    counters = drv.interface_counters()
    # rx packets = unicast + multicast + broadcast: 0 + 1429 + 0 on Ethernet2, 0 + 0 + 15 on Management1
    assert counters["Ethernet2"] == {"rx_packets": 1429, "rx_bytes": 180591, "rx_dropped": 0,
                                     "tx_packets": 94, "tx_bytes": 16386, "tx_dropped": 0}
    assert counters["Management1"]["rx_packets"] == 15 and counters["Management1"]["tx_packets"] == 19575


# -------------------------------------------------------------------------------------------------------- Junos
class _PyEzRpc:
    """PyEZ's ``dev.rpc``: every RPC answers with the recorded reply (NAPALM asks ``get-interface-information``
    twice, for the physical and the logical interface tables)."""

    def __init__(self, xml: str):
        self.xml = xml
        self.calls: list[str] = []

    def __getattr__(self, name):
        def call(**_kw):
            self.calls.append(name)
            return etree.fromstring(self.xml.encode())
        return call


class _PyEzDevice:
    _use_filter = False
    hostname = "mx"
    facts: dict = {}
    transform = None

    def __init__(self, xml: str):
        self.rpc = _PyEzRpc(xml)


def test_junos_get_interface_information_link_states():
    from napalm.junos.junos import JunOSDriver

    napalm_dev = JunOSDriver("192.0.2.1", "user", "unused")
    napalm_dev.device = _PyEzDevice(rec("junos/get-interface-information/napalm_junos_iffdown_excerpt.xml"))
    drv = JunosDriver("192.0.2.1", 830, "user", "unused")
    drv._device = napalm_dev
    states = drv.link_states()
    assert napalm_dev.device.rpc.calls == ["get-interface-information"] * 2
    assert states["ge-5/0/0"] == "up"
    assert states["ge-5/0/1"] == "down"                              # admin up, oper down (iff-hardware-down)
    assert states["ge-5/0/0.0"] == "admin-down"                      # the unit's iff-down flag
    assert states["ge-5/0/1.0"] == "down"
    assert {states[n] for n in ("lc-5/0/0", "pfe-5/0/0", "pfh-5/0/0")} == {"up"}


# ----------------------------------------------------------------------------------------------------- ProCurve
@pytest.fixture(scope="module")
def e2910al() -> str:
    return rec("procurve/show_running-config/napalm-procurve_e2910al-48g-poe.txt")


def test_procurve_running_config_port_model(e2910al):
    model = procurve_model.parse_model(e2910al)
    ports = {p.interface: p for p in model.ports}
    assert list(ports) == [str(n) for n in range(1, 49)]
    assert model.vlans == (1, 2, 3, 4)
    assert model.vlan_names == {1: "DEFAULT_VLAN", 2: "Internet", 3: "PublicSpot", 4: "test"}
    assert model.stp_mode == "mstp"                                  # bare "spanning-tree": the MSTP default
    # port 35 leaves VLAN 1 ("no untagged 35") and is the untagged member of VLAN 4
    assert (ports["35"].mode, ports["35"].access_vid) == ("access", 4)
    # ports 2 and 11: untagged VLAN 1, tagged in VLANs 2 and 3
    for n in ("2", "11"):
        assert (ports[n].mode, ports[n].native_vid, ports[n].allowed_vids) == ("trunk", 1, (2, 3))
    # tagged only in VLAN 3
    for n in ("4", "7", "13", "17", "37", "39"):
        assert (ports[n].mode, ports[n].native_vid, ports[n].allowed_vids) == ("trunk", 1, (3,))
    trunks = {"2", "4", "7", "11", "13", "17", "35", "37", "39"}
    assert all((p.mode, p.access_vid) == ("access", 1) for n, p in ports.items() if n not in trunks)
    assert ports["6"].description == "rtr IPMI" and ports["8"].description == "rtr eth0"
    assert ports["1"].unparsed == ("flow-control", "lacp passive", "poe-lldp-detect enabled")
    assert not any(p.lag or p.is_lag or p.shutdown or p.dot1x or p.port_security for p in model.ports)


def test_procurve_running_config_port_states_and_vlans(e2910al):
    states = procurve_parse.port_states(e2910al)
    assert len(states) == 48
    assert (states["35"].mode, states["35"].access_vid) == ("access", 4)
    assert (states["2"].mode, states["2"].native_vid, states["2"].allowed_vids) == ("trunk", 1, (1, 2, 3))
    assert (states["48"].mode, states["48"].access_vid) == ("access", 1)
    assert procurve_parse.vlan_names(e2910al) == {1: "DEFAULT_VLAN", 2: "Internet", 3: "PublicSpot", 4: "test"}
