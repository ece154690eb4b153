"""The emulated IOS switch's preflight features, in process (fast): VTP modes and ``show vtp status``, port-channels
as a Catalyst shows them, voice VLAN, port security, 802.1X/MAB lines, routed ports, the session's ingress port —
each read back through the running config and the IOS port model (harmless.switch_drivers.ios.model)."""
import logging

import pytest

fake_switches = pytest.importorskip("fake_switches", reason="fake_switches is not installed; the lab switch cannot run")

from fake_switches import switch_factory  # noqa: E402
from fake_switches.cisco.command_processor.piping import PipingProcessor  # noqa: E402

from harmless.emulators import ios as ios_emu  # noqa: E402
from tests.drivers.test_ios_emulator import _Term  # noqa: E402  (the same capturing terminal)
from harmless.switch_drivers.ios.driver import session_port_of  # noqa: E402
from harmless.switch_drivers.ios.model import parse_model, vtp_mode_of  # noqa: E402


def make_cli(platform="2960"):
    ios_emu.install()
    core = switch_factory.SwitchFactory().get("cisco_2960_24TT_L", "sw9", "pw")
    ios_emu.set_platform(core.switch_configuration, platform)
    term = _Term()
    proc = core.new_command_processor()
    proc.init(core.switch_configuration, term, logging.getLogger("test.ios_emu"),
              PipingProcessor(logging.getLogger("p")))

    def run(*lines):
        for line in lines:
            proc.process_command(line)
        return term.take()

    run.sc, run.proc = core.switch_configuration, proc
    return run


def model(cli):
    return parse_model(ios_emu.running_config_text(cli.sc), {"show vtp status": cli("show vtp status")})


def test_factory_default_is_a_vtp_server_that_keeps_vlans_out_of_the_running_config():
    cli = make_cli()
    cli("configure terminal", "vlan 107", "name harmless-sw9-p7", "end")
    text = ios_emu.running_config_text(cli.sc)
    assert "vlan 107" not in text and "vtp" not in text
    assert "spanning-tree mode pvst" in text
    assert cli.sc.get_vlan(107).name == "harmless-sw9-p7"                  # in vlan.dat (show vlan)
    assert "107  harmless-sw9-p7" in cli("show vlan brief")
    status = cli("show vtp status")
    assert "VTP Operating Mode                : Server" in status and "Configuration Revision            : 1" in status
    assert vtp_mode_of(status) == "server"
    assert model(cli).vtp_mode == "server"
    # a VTP v1 server cannot create extended VLANs
    out = cli("configure terminal", "vlan 2000", "end")
    assert "Extended VLAN(s) not allowed in current VTP mode" in out and cli.sc.get_vlan(2000) is None


def test_vtp_modes_read_back_like_ios():
    cli = make_cli()
    cli("configure terminal", "vtp domain CORP", "vtp mode transparent", "vlan 10,20,30", "vlan 2000", "end")
    text = ios_emu.running_config_text(cli.sc)
    assert "vtp domain CORP\nvtp mode transparent\n" in text
    assert all(f"vlan {v}\n" in text for v in (10, 20, 30, 2000))
    m = model(cli)
    assert m.vtp_mode == "transparent" and {10, 20, 30, 2000} <= set(m.vlans)
    cli("configure terminal", "vtp mode client", "end")
    assert "VTP Operating Mode                : Client" in cli("show vtp status")
    out = cli("configure terminal", "vlan 40", "end")
    assert "VTP VLAN configuration not allowed when device is in CLIENT mode." in out and cli.sc.get_vlan(40) is None
    assert model(cli).vtp_mode == "client"
    cli("configure terminal", "vtp mode off", "end")
    assert "vtp mode off" in ios_emu.running_config_text(cli.sc) and model(cli).vtp_mode == "off"
    cli("configure terminal", "no vtp mode", "end")
    assert model(cli).vtp_mode == "server"


def test_port_channels_read_back_as_written():
    cli = make_cli()
    cli("configure terminal", "vtp mode transparent", "interface FastEthernet0/23", "switchport mode trunk",
        "channel-group 1 mode on", "interface FastEthernet0/24", "switchport mode trunk", "channel-group 1 mode on",
        "interface FastEthernet0/22", "channel-group 2 mode active", "end")
    text = ios_emu.running_config_text(cli.sc)
    assert " channel-group 1 mode on" in text and " channel-group 2 mode active" in text
    assert text.index("interface Port-channel1") < text.index("interface FastEthernet0/1\n")
    assert "interface Port-channel2" in text
    out = cli("show etherchannel summary")
    assert "1      Po1(SU)       -           Fa0/23(P)   Fa0/24(P)" in out
    assert "Po2(SU)       LACP" in out
    m = model(cli)
    assert m.port("FastEthernet0/23").lag == "Port-channel1" and m.port("Port-channel1").is_lag
    assert "% Invalid input" in cli("configure terminal", "interface FastEthernet0/21", "channel-group 3 mode bogus",
                                    "end")
    cli("configure terminal", "interface FastEthernet0/22", "no channel-group", "end")
    assert model(cli).port("FastEthernet0/22").lag is None


def test_voice_port_security_and_dot1x_lines():
    cli = make_cli()
    out = cli("configure terminal", "vtp mode transparent", "interface FastEthernet0/3", "switchport port-security",
              "end")
    assert "Command rejected: FastEthernet0/3 is a dynamic port." in out
    cli("configure terminal",
        "interface FastEthernet0/1", "switchport access vlan 10", "switchport mode access", "switchport voice vlan 11",
        "interface FastEthernet0/2", "switchport access vlan 10", "switchport mode access",
        "authentication port-control auto", "mab", "dot1x pae authenticator",
        "interface FastEthernet0/3", "switchport mode access", "switchport port-security",
        "switchport port-security mac-address sticky", "switchport port-security mac-address sticky 0011.2233.4455",
        "end")
    text = ios_emu.running_config_text(cli.sc)
    assert " switchport mode access\n switchport voice vlan 11\n" in text
    assert " authentication port-control auto\n mab\n dot1x pae authenticator\n" in text
    assert " switchport port-security mac-address sticky 0011.2233.4455" in text
    m = model(cli)
    assert m.port("FastEthernet0/1").voice_vid == 11
    assert m.port("FastEthernet0/2").dot1x and not m.port("FastEthernet0/1").dot1x
    assert m.port("FastEthernet0/3").port_security
    cli("configure terminal", "interface FastEthernet0/1", "no switchport voice vlan", "interface FastEthernet0/2",
        "no mab", "no authentication port-control", "no dot1x pae", "interface FastEthernet0/3",
        "no switchport port-security", "end")
    m = model(cli)
    assert m.port("FastEthernet0/1").voice_vid is None and not m.port("FastEthernet0/2").dot1x
    assert not m.port("FastEthernet0/3").port_security


def test_routed_port_only_on_the_3750():
    cli = make_cli("2960")
    assert "% Invalid input" in cli("configure terminal", "interface FastEthernet0/5", "no switchport", "end")
    cli = make_cli("3750")
    out = cli("configure terminal", "interface GigabitEthernet0/2", "ip address 10.0.0.1 255.255.255.252", "end")
    assert "% IP addresses may not be configured on L2 links." in out
    cli("configure terminal", "vtp mode transparent", "interface GigabitEthernet0/2", "no switchport",
        "ip address 10.0.0.1 255.255.255.252", "end")
    text = ios_emu.running_config_text(cli.sc)
    assert "interface GigabitEthernet0/2\n no switchport\n ip address 10.0.0.1 255.255.255.252\n" in text
    assert model(cli).port("GigabitEthernet0/2").mode == "routed"
    # configure replace back to a switched port works (no switchport is undone by "switchport")
    cli("copy running-config flash:/routed.txt")
    cli("configure terminal", "interface GigabitEthernet0/2", "switchport", "end")
    assert model(cli).port("GigabitEthernet0/2").mode == "dynamic"
    assert "Rollback Done" in cli("configure replace flash:/routed.txt force")
    assert model(cli).port("GigabitEthernet0/2").mode == "routed"


def test_session_port_lookup_through_the_emulator():
    cli = make_cli()
    names = [p.name for p in cli.sc.get_physical_ports()]

    def show(cmd):                                   # the output as NAPALM's cli() returns it (no prompt)
        return cli(cmd).rpartition("\n")[0]

    look = (lambda ip: show(f"show ip arp {ip}"), lambda mac: show(f"show mac address-table address {mac}"))
    assert session_port_of(show("show users"), *look, names) is None          # loopback session: unknown
    ios_emu.set_session_port(cli.sc, "GigabitEthernet0/2")
    assert session_port_of(show("show users"), *look, names) == "GigabitEthernet0/2"


def test_configure_replace_keeps_vlan_database_on_a_vtp_server():
    """configure replace never touches vlan.dat: the VLANs a merge created stay (the driver deletes its own)."""
    cli = make_cli()
    cli("configure terminal", "interface FastEthernet0/7", "switchport mode access", "end")
    cli("copy running-config flash:/base.txt")
    cli("configure terminal", "vlan 107", "name harmless-sw9-p7", "interface FastEthernet0/7",
        "switchport access vlan 107", "end")
    assert "Rollback Done" in cli("configure replace flash:/base.txt force")
    assert cli.sc.get_port("FastEthernet0/7").access_vlan is None
    assert cli.sc.get_vlan(107) is not None
