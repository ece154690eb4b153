"""Junos driver pure parts: the set/delete template in ELS and non-ELS syntax (golden files, validated by
parsing them as set commands and applying them to a parsed configuration), the curly/set parser (cross-checked
against ciscoconfparse2's ``junos`` syntax), per-port state, syntax detection and error messages."""
from pathlib import Path

import pytest
from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.junos.conf import apply_commands, display_set, parse_curly, parse_set
from harmless.switch_drivers.junos.driver import JunosDriver, device_message
from harmless.switch_drivers.junos.parse import (detect_syntax, parse_port_states, parse_vlans,
                                                 vlan_side_members)
from harmless.switch_drivers.junos.render import render_config
from tests.unit.golden_files import check_golden

DATA = Path(__file__).parents[1] / "drivers" / "mocked_data" / "junos"
ELS = (DATA / "els_original.conf").read_text()
LEGACY = (DATA / "legacy_original.conf").read_text()
ACCESS = [AccessPortChange("ge-0/0/7", 107, "hl107"), AccessPortChange("ge-0/0/8", 108, "hl108"),
          AccessPortChange("ge-0/0/10", 110, "hl110")]
TRUNKS = [TrunkChange("ge-0/0/25", (110, 107, 108))]
INTENDED = {
    "ge-0/0/7": PortVlanState("ge-0/0/7", "access", access_vid=107),
    "ge-0/0/8": PortVlanState("ge-0/0/8", "access", access_vid=108),
    "ge-0/0/10": PortVlanState("ge-0/0/10", "access", access_vid=110),
    "ge-0/0/25": PortVlanState("ge-0/0/25", "trunk", native_vid=None, allowed_vids=(107, 108, 110)),
}


@pytest.mark.parametrize("name, syntax, original", [("junos_els.set", "els", ELS),
                                                    ("junos_legacy.set", "legacy", LEGACY)])
def test_golden_candidates_apply_to_the_intended_port_states(name, syntax, original):
    golden = check_golden(name, render_config(ACCESS, TRUNKS, syntax=syntax,
                                              vlan_side=vlan_side_members(original)))
    ops = parse_set(golden)                                      # syntax: every line is a valid set/delete command
    assert all(op in ("set", "delete") for op, _ in ops)
    keyword = "interface-mode" if syntax == "els" else "port-mode"
    other = "port-mode" if syntax == "els" else "interface-mode"
    assert keyword in golden and other not in golden
    after = apply_commands(parse_curly(original), ops)           # semantics: load set + commit on the device config
    text = display_set(after)
    states = parse_port_states(text)
    assert {n: states[n] for n in INTENDED} == INTENDED
    assert {107: "hl107", 108: "hl108", 110: "hl110"}.items() <= parse_vlans(text).items()
    untouched = {n: s for n, s in parse_port_states(original).items() if n not in INTENDED}
    assert {n: states[n] for n in untouched} == untouched
    assert vlan_side_members(text) == {}                         # the non-ELS `vlans users interface ge-0/0/8.0` is gone


def test_migrated_device_output_matches_the_model():
    """The hand-written 'device' config after the commit equals what the rendered commands produce."""
    ops = parse_set(render_config(ACCESS, TRUNKS))
    model = parse_port_states(display_set(apply_commands(parse_curly(ELS), ops)))
    assert parse_port_states((DATA / "els_migrated.conf").read_text()) == model


@pytest.mark.parametrize("conf", ["els_original.conf", "legacy_original.conf", "els_migrated.conf"])
def test_curly_parser_agrees_with_ciscoconfparse2(conf):
    text = (DATA / conf).read_text()
    ccp = CiscoConfParse(text.splitlines(), syntax="junos")
    theirs = set()
    for obj in ccp.objs:
        if obj.children or obj.text.strip().startswith("#"):
            continue
        words = [w for o in [*obj.all_parents, obj] for w in o.text.split()]
        words = [w.strip('"') for w in words]
        if "[" in words:
            i = words.index("[")
            theirs |= {tuple(words[:i]) + (item,) for item in words[i + 1:-1]}
        else:
            theirs.add(tuple(words))
    mine = {p for p in parse_curly(text) if p[-1] != "host 7"} | {
        tuple(w for w in p[:-1]) + tuple(p[-1].split()) for p in parse_curly(text) if p[-1] == "host 7"}
    assert mine == theirs


def test_parse_port_states_both_syntaxes():
    assert parse_port_states(ELS) == {
        "ge-0/0/7": PortVlanState("ge-0/0/7", "access", access_vid=100),
        "ge-0/0/8": PortVlanState("ge-0/0/8", "access", access_vid=100),
        "ge-0/0/10": PortVlanState("ge-0/0/10", "access", access_vid=101),
        "ge-0/0/12": PortVlanState("ge-0/0/12", "access", access_vid=1, shutdown=True),
        "xe-0/2/0": PortVlanState("xe-0/2/0", "trunk", native_vid=100, allowed_vids=(100, 101)),
        "ge-0/0/25": PortVlanState("ge-0/0/25", "access", access_vid=1),
    }
    assert parse_port_states(LEGACY)["ge-0/0/23"] == PortVlanState("ge-0/0/23", "trunk", native_vid=101,
                                                                   allowed_vids=(100, 101))
    assert parse_port_states(LEGACY)["ge-0/0/8"].access_vid == 100          # VLAN-side membership
    assert parse_port_states(display_set(parse_curly(ELS))) == parse_port_states(ELS)   # `display set` input
    assert parse_vlans(ELS) == {1: "default", 100: "users", 101: "printers"}


def test_detect_syntax():
    assert detect_syntax(ELS) == "els" and detect_syntax(LEGACY) == "legacy"
    bare = "interfaces { ge-0/0/1 { unit 0 { family ethernet-switching; } } }\n"
    assert detect_syntax(bare, "EX4200-48T") == "legacy" and detect_syntax(bare, "EX4300-48T") == "els"
    assert detect_syntax(bare, "") == "els"


@pytest.mark.parametrize("text", ["interfaces { ge-0/0/1 { disable; }\n", "interfaces { disable }\n",
                                  "vlans { a { vlan-id 1; } } }\n", 'interfaces { description "x; }\n'])
def test_curly_parser_rejects_broken_text(text):
    with pytest.raises(ValueError, match="line"):
        parse_curly(text)


@pytest.mark.parametrize("text", ["sett vlans a vlan-id 1", "set vlans a { vlan-id 1 }", "set x [ a b"])
def test_set_parser_rejects_broken_text(text):
    with pytest.raises(ValueError, match="line 1"):
        parse_set(text)


@pytest.mark.parametrize("access, trunks, syntax, msg", [
    ([AccessPortChange("ge-0/0/7", 107, "hl107", qinq=True)], [], "els", "QinQ is not supported"),
    ([AccessPortChange("Ethernet7", 107, "hl107")], [], "els", "not a Junos switch port"),
    ([AccessPortChange("ge-0/0/7", 107, "107x")], [], "els", "must start with a letter"),
    ([AccessPortChange("ge-0/0/7", 4095, "a")], [], "els", "outside 1..4094"),
    ([AccessPortChange("ge-0/0/7", 107, "a"), AccessPortChange("ge-0/0/8", 108, "a")], [], "els", "two VIDs"),
    ([AccessPortChange("ge-0/0/7", 107, "a")], [TrunkChange("ge-0/0/7", (107,))], "els", "changed twice"),
    ([], [], "ios", "not one of"),
])
def test_render_rejects_bad_input(access, trunks, syntax, msg):
    with pytest.raises(ValueError, match=msg):
        render_config(access, trunks, syntax=syntax)


def test_capabilities_and_messages():
    d = JunosDriver("h", 830, "admin", "S3cret!", optional_args={"junos_vlan_syntax": "legacy"})
    assert not d.capabilities.qinq and d.capabilities.commit_confirm and d.capabilities.stag_tpids == ()
    assert d.vlan_syntax == "legacy" and "junos_vlan_syntax" not in d._napalm_optional_args()
    assert d._redact("x S3cret! y") == "x *** y"
    with pytest.raises(ValueError, match="junos_vlan_syntax"):
        JunosDriver("h", 830, "admin", "pw", optional_args={"junos_vlan_syntax": "new"})
    err = ("[{'source': None, 'edit_path': '[edit vlans]', 'bad_element': 'hl110', 'message': 'syntax error', "
           "'severity': 'error'}]")
    assert device_message(err) == "[edit vlans] hl110: syntax error"
    assert device_message("  plain failure\nmore") == "plain failure"
