"""ProCurve driver pure parts: port lists, render (golden), ttp parser, VLAN-semantic diff and restore."""
import os
from pathlib import Path

import pytest

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.procurve.dialect import diff, transform
from harmless.switch_drivers.procurve.parse import format_ports, parse_config, parse_ports, port_states
from harmless.switch_drivers.procurve.render import render_config

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "procurve" / "access_trunk.cfg"
ACCESS = [AccessPortChange("7", 107, "harmless-sw2-p1"), AccessPortChange("8", 108, "harmless-sw2-p2")]
TRUNKS = [TrunkChange("25", (107, 108))]
RUNNING = """\
hostname "sw2"
vlan 1
   name "DEFAULT_VLAN"
   no untagged 7-8
   untagged 1-6,9-28
   exit
vlan 100
   name "users"
   untagged 7-8
   exit
vlan 105
   name "harmless-sw2-p9"
   tagged 25
   exit
"""


@pytest.mark.parametrize("text, ports", [("1-3,7", ("1", "2", "3", "7")), ("A1-A2,5", ("5", "A1", "A2")), ("", ())])
def test_port_lists(text, ports):
    assert parse_ports(text) == ports
    assert parse_ports(format_ports(ports)) == ports


@pytest.mark.parametrize("bad", ["3-1", "A1-B2", "x"])
def test_bad_port_lists(bad):
    with pytest.raises(ValueError):
        parse_ports(bad)


def test_render_golden_and_parses_back():
    text = render_config(ACCESS, TRUNKS)
    if os.environ.get("HARMLESS_REGEN_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
    _host, vlans = parse_config(text)                                  # validated by the ttp parser
    assert {v: (x.name, x.untagged, x.tagged) for v, x in vlans.items()} == {
        107: ("harmless-sw2-p1", ("7",), ("25",)), 108: ("harmless-sw2-p2", ("8",), ("25",))}
    assert port_states(text)["25"] == PortVlanState("25", "trunk", native_vid=None, allowed_vids=(107, 108))


@pytest.mark.parametrize("access, trunks, match", [
    ([AccessPortChange("7", 107, "x", qinq=True)], [], "QinQ"),
    ([AccessPortChange("Fa0/7", 107, "x")], [], "bad ProCurve port"),
    ([AccessPortChange("7", 4095, "x")], [], "outside"),
    ([AccessPortChange("7", 107, "a b")], [], "VLAN name"),
    ([AccessPortChange("7", 107, "a")], [TrunkChange("7", (107,))], "twice"),
])
def test_render_rejects(access, trunks, match):
    with pytest.raises(ValueError, match=match):
        render_config(access, trunks)


def test_port_states_from_running():
    st = port_states(RUNNING)
    assert st["7"] == PortVlanState("7", "access", access_vid=100)
    assert st["1"] == PortVlanState("1", "access", access_vid=1)
    assert st["25"] == PortVlanState("25", "trunk", native_vid=1, allowed_vids=(1, 105))


def test_stale_harmless_vlan_removed_and_semantic_diff():
    cand = render_config(ACCESS, TRUNKS, current=RUNNING)
    assert cand.endswith("no vlan 105\n")
    d = diff(RUNNING, cand)
    assert "+vlan 107" in d and "+   untagged 7" in d and "+   tagged 25" in d and "-vlan 105" in d
    after = RUNNING.replace("vlan 105\n   name \"harmless-sw2-p9\"\n   tagged 25\n   exit\n", "") + \
        cand.replace("no vlan 105\n", "")
    assert diff(after, render_config(ACCESS, TRUNKS)) == ""


def test_transform_back_to_saved():
    after = RUNNING + 'vlan 107\n   name "harmless-sw2-p1"\n   untagged 7\n   tagged 25\n   exit\n'
    after = after.replace("   untagged 7-8\n", "   untagged 8\n")
    lines = transform(after, RUNNING)
    assert lines == ["vlan 100", "   untagged 7", "   exit", "no vlan 107"]
    assert transform(RUNNING, RUNNING) == []
