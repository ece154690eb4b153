"""The fake-switches IOS extension, in process (fast): exec/config commands NAPALM relies on."""
import logging

import pytest

fake_switches = pytest.importorskip("fake_switches", reason="fake_switches is not installed; the lab switch cannot run")

from fake_switches import switch_factory  # noqa: E402
from fake_switches.cisco.command_processor.piping import PipingProcessor  # noqa: E402

from harmless.emulators import ios as ios_emu  # noqa: E402

STARTUP = """\
vtp mode transparent
vlan 101
 name printers
!
vlan 100
 name users
!
interface FastEthernet0/7
 description desk 7
 switchport access vlan 100
 switchport mode access
!
interface FastEthernet0/8
 switchport trunk native vlan 99
 switchport trunk allowed vlan 100,101
 switchport mode trunk
 shutdown
!
interface Vlan100
 ip address 192.0.2.1 255.255.255.0
!
ip route 198.51.100.0 255.255.255.0 192.0.2.254
end
"""


class _Term:
    def __init__(self):
        self.out = []

    def write(self, text):
        self.out.append(text)

    def add_any_key_handler(self, *_):
        pass

    def remove_any_key_handler(self):
        pass

    def take(self) -> str:
        text, self.out = "".join(self.out), []
        return text


@pytest.fixture
def cli():
    ios_emu.install()
    core = switch_factory.SwitchFactory().get("cisco_2960_24TT_L", "sw9", "pw")
    term = _Term()
    proc = core.new_command_processor()
    proc.init(core.switch_configuration, term, logging.getLogger("test.ios_emu"), PipingProcessor(logging.getLogger("p")))
    assert ios_emu.apply_config_text(proc, STARTUP) == []

    def run(*lines):
        for line in lines:
            proc.process_command(line)
        return term.take()

    run.sc = core.switch_configuration
    yield run
    ios_emu.set_reject_patterns([])


def test_running_config_vlans_sorted_and_routes_kept(cli):
    text = ios_emu.running_config_text(cli.sc)
    assert text.index("vlan 100") < text.index("vlan 101")
    assert "ip route 198.51.100.0 255.255.255.0 192.0.2.254" in text
    assert " ip address 192.0.2.1 255.255.255.0" in text


def test_configure_replace_round_trips_byte_for_byte(cli):
    before = cli("show running-config")
    cli("copy running-config flash:/saved.txt")
    cli("configure terminal", "vlan 107", "name hl107", "interface FastEthernet0/7", "switchport access vlan 107",
        "no shutdown", "interface FastEthernet0/8", "no shutdown", "switchport trunk allowed vlan 107",
        "interface Vlan200", "ip address 203.0.113.1 255.255.255.0", "end")
    assert cli("show running-config") != before
    out = cli("configure replace flash:/saved.txt force")
    assert "Rollback Done" in out
    assert cli("show running-config") == before


def test_incremental_diff_and_copy_merge(cli):
    ios_emu.flash(cli.sc)["m.txt"] = "vlan 100\n name users\ninterface FastEthernet0/7\n switchport access vlan 107\n"
    diff = cli("show archive config incremental-diffs flash:/m.txt ignorecase")
    assert "interface FastEthernet0/7\n switchport access vlan 107" in diff and "vlan 100" not in diff
    cli("copy flash:/m.txt running-config")
    assert "!No changes were found" in cli("show archive config incremental-diffs flash:/m.txt ignorecase")


def test_reject_hook_interactive_and_in_copy(cli):
    ios_emu.set_reject_patterns([r"^spanning-tree"])
    out = cli("configure terminal", "interface FastEthernet0/9", "spanning-tree portfast", "description ok", "end")
    assert "% Invalid input detected at '^' marker." in out
    assert cli.sc.get_port("FastEthernet0/9").description == "ok"
    ios_emu.flash(cli.sc)["bad.txt"] = "vlan 300\n!\nspanning-tree mode rapid-pvst\nvlan 301\n"
    out = cli("copy flash:/bad.txt running-config")
    assert "spanning-tree mode rapid-pvst\n   ^\n% Invalid input detected at '^' marker." in out
    assert cli.sc.get_vlan(300) and cli.sc.get_vlan(301)              # IOS goes on after a bad line


def test_archive_not_enabled(cli):
    assert "Archive feature not enabled" in cli("show archive")
