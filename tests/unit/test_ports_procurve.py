"""ProCurve port model edge cases (switch-drivers/procurve/model.py) and the parser fixes of issue #12: Trk and
stack names in VLAN port lists, configs pasted without indentation, modes from VLAN membership."""
from pathlib import Path

import pytest

from harmless.switch_drivers.procurve.model import format_port_list, parse_model, parse_port_list
from harmless.switch_drivers.procurve.parse import parse_config, port_states

CORPUS = Path(__file__).parent / "ports_corpus" / "procurve"


@pytest.mark.parametrize("text, ports", [
    ("1/A1-1/A3,Trk1", ("1/A1", "1/A2", "1/A3", "Trk1")),
    ("2/1-2/2,1/47", ("1/47", "2/1", "2/2")),
    ("trk1-trk2,A24", ("A24", "Trk1", "Trk2")),
])
def test_stack_and_trunk_names_in_port_lists(text, ports):
    assert parse_port_list(text) == ports
    assert parse_port_list(format_port_list(ports)) == ports


@pytest.mark.parametrize("bad", ["1/A1-2/A2", "A1-Trk1", "Gi1/0/1", "1/A3-1/A1"])
def test_bad_port_lists(bad):
    with pytest.raises(ValueError):
        parse_port_list(bad)


def test_trk_in_vlan_port_lists_no_longer_raises_in_the_driver_parser():
    text = 'vlan 10\n   untagged 1/A1\n   tagged Trk1\n   exit\ntrunk 1/A23-1/A24 trk1 lacp\n'
    _host, vlans = parse_config(text)
    assert vlans[10].tagged == ("Trk1",) and vlans[10].untagged == ("1/A1",)
    assert port_states(text)["Trk1"].allowed_vids == (10,)


def test_unindented_paste_gives_the_same_model():
    indented = (CORPUS / "2530_48g_basic.cfg").read_text()
    flat = "\n".join(ln.strip() for ln in indented.splitlines())
    assert flat != indented
    model = parse_model(flat)
    assert model == parse_model(indented)
    assert model.port("1").access_vid == 10 and model.port("49").allowed_vids == (10, 20, 99)
    assert parse_config(flat) == parse_config(indented)


def test_modes_from_vlan_membership():
    text = ("vlan 1\n untagged 1-3\n no untagged 4-6\n exit\nvlan 10\n untagged 4\n tagged 5-6\n exit\n"
            "vlan 20\n tagged 1,6\n voice\n exit\nvlan 30\n untagged 7\n ip address 10.0.0.1 255.255.255.0\n exit\n")
    m = parse_model(text)
    assert (m.port("1").mode, m.port("1").access_vid, m.port("1").voice_vid) == ("access", 1, 20)
    assert (m.port("2").mode, m.port("2").voice_vid) == ("access", None)
    assert (m.port("4").mode, m.port("4").access_vid) == ("access", 10)
    assert (m.port("5").mode, m.port("5").native_vid, m.port("5").allowed_vids) == ("trunk", None, (10,))
    assert (m.port("6").mode, m.port("6").allowed_vids, m.port("6").voice_vid) == ("trunk", (10, 20), 20)
    assert m.port("7").mode == "access" and m.vlans == (1, 10, 20, 30)       # VLAN 30 is a routed SVI, 7 a port


def test_lag_members_dot1x_port_security_shutdown_and_unparsed():
    text = ('trunk 23-24 trk1 lacp\ninterface 5\n name "kiosk"\n disable\n speed-duplex 100-full\n exit\n'
            "vlan 1\n untagged 1-22,Trk1\n exit\naaa port-access authenticator 1-4\naaa port-access mac-based 5\n"
            "port-security 6 learn-mode static address-limit 1\nspanning-tree 1-4 admin-edge-port\nmax-vlans 8\n")
    m = parse_model(text)
    assert m.port("23").lag == "Trk1" and m.port("23").mode == "unknown" and m.port("Trk1").is_lag
    assert m.port("1").dot1x and m.port("5").dot1x and not m.port("6").dot1x and m.port("6").port_security
    p5 = m.port("5")
    assert (p5.shutdown, p5.description, p5.unparsed) == (True, "kiosk", ("speed-duplex 100-full",))
    assert m.port("1").unparsed == ("spanning-tree 1-4 admin-edge-port",)
    assert not m.port("8").unparsed                                  # `max-vlans 8` is not about port 8


@pytest.mark.parametrize("text", ["interfaces { ge-0/0/1 { disable; } }\n",
                                  "hostname sw\ninterface GigabitEthernet0/1\n switchport\n", "\n"])
def test_not_a_procurve_configuration(text):
    with pytest.raises(ValueError):
        parse_model(text)


def test_driver_port_model_reads_procurve_syntax_also_through_netmiko_cli():
    from harmless.switch_drivers.netmiko_cli.driver import NetmikoCliDriver
    from harmless.switch_drivers.procurve.driver import ProcurveDriver

    text = (CORPUS / "2920_stack.cfg").read_text()

    class Saved(ProcurveDriver):                     # the device's running config, without a device
        def running_config(self):
            return text

    assert Saved("h", 22, "u", "p").port_model() == parse_model(text)
    generic = NetmikoCliDriver("h", 22, "u", "p", optional_args={"device_type": "hp_procurve"})
    assert generic.port_model_syntax == "procurve"
    assert NetmikoCliDriver("h", 22, "u", "p").port_model_syntax is None      # cisco_ios: the ios model
