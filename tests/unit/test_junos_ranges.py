"""Junos interface ranges (ELS, realistic configs of the port corpus): a migrated port leaves its range and keeps the
rest of what the range gave it, so the range's ``vlan members`` no longer applies beside the HARMLESS VLAN; ``down``'s
merge gives the range, the port and the statements naming them back; an incremental ``up`` that drops one of two
migrated ports of a range gives the range back too and renders again."""
from __future__ import annotations

from pathlib import Path

from harmless import ownership as ow
from harmless.switch_drivers import devdiff
from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.junos import ownership as jo
from harmless.switch_drivers.junos.conf import read_config
from harmless.switch_drivers.junos.model import parse_model
from harmless.switch_drivers.junos.ranges import range_commands
from harmless.switch_drivers.junos.render import render_config
from harmless.switch_drivers.ownership import syntax_for

CORPUS = Path(__file__).parent / "ports_corpus" / "junos"
DISPLAY_SET = (CORPUS / "ex4300_els_display_set.cfg").read_text()      # DESKS: member ge-0/0/[0-9], ge-0/0/[20-23]
VC_CAPTURE = (CORPUS / "ex4300_vc_cli_capture.cfg").read_text()        # DESKS: member-range, rstp/dot1x/voip DESKS
EX2300 = (CORPUS / "ex2300_els_access.cfg").read_text()                # STAFF (member-range), PUBLIC (member [..])
EX4600 = (CORPUS / "ex4600_vc_ranges_set.cfg").read_text()             # SERVERS: trunks of PROD, DEV


def access(*ports: str, vid: int = 105) -> list[AccessPortChange]:
    return [AccessPortChange(p, vid + i, f"harmless-sw1-p{vid + i - 100}") for i, p in enumerate(ports)]


def port(config: str, name: str):
    return parse_model(config).port(name)


def curly(config: str) -> str:
    """A configuration as curly text, one block per word (how the ownership syntax reads what a device prints; the
    grouping is the same for every config of a test, so their objects compare)."""
    def word(w: str) -> str:
        return f'"{w}"' if not w or any(c in w for c in ' ;{}[]"') else w
    lines = [" ".join(f"{word(w)} {{" for w in p[:-1]) + f" {word(p[-1])};" + " }" * (len(p) - 1)
             for p, off in read_config(config)[0] if not off]
    return jo.render(x for ln in lines for x in jo.leaves(ln))


def test_a_range_member_leaves_the_range_and_is_in_its_harmless_vlan_only():
    """ge-0/0/5 (hot desk) and ge-0/0/20 get their VLAN from DESKS (``vlan members DATA``): without taking them out of
    the range, DATA would apply beside the HARMLESS VLAN (the model then sees VLAN 100); with it, the range keeps its
    other members and the ports keep its storm control."""
    acc, trunk = access("ge-0/0/5"), [TrunkChange("ge-0/0/20", (105,))]
    naive = devdiff.merged(DISPLAY_SET, render_config(acc, trunk), "junos")
    assert port(naive, "ge-0/0/5").access_vid == 100                  # DATA still applies: the bug being fixed
    cand = render_config(acc, trunk, current=DISPLAY_SET)
    assert cand.endswith('delete interfaces interface-range DESKS member "ge-0/0/[0-9]"\n'
                         "set interfaces interface-range DESKS member-range ge-0/0/0 to ge-0/0/4\n"
                         "set interfaces interface-range DESKS member-range ge-0/0/6 to ge-0/0/9\n"
                         'delete interfaces interface-range DESKS member "ge-0/0/[20-23]"\n'
                         "set interfaces interface-range DESKS member-range ge-0/0/21 to ge-0/0/23\n"
                         "set interfaces ge-0/0/5 unit 0 family ethernet-switching storm-control default\n"
                         "set interfaces ge-0/0/20 unit 0 family ethernet-switching storm-control default\n")
    after = devdiff.merged(DISPLAY_SET, cand, "junos")
    p5, p20 = port(after, "ge-0/0/5"), port(after, "ge-0/0/20")
    assert (p5.mode, p5.access_vid, p5.description) == ("access", 105, "desk 5 (hot desk)")
    assert (p20.mode, p20.allowed_vids) == ("trunk", (105,))
    assert "set interfaces ge-0/0/5 unit 0 family ethernet-switching storm-control default" in p5.unparsed
    for other in ("ge-0/0/4", "ge-0/0/6", "ge-0/0/9", "ge-0/0/21", "ge-0/0/23"):
        assert (port(after, other).mode, port(after, other).access_vid) == ("access", 100), other


def test_statements_naming_the_range_follow_the_port_and_down_gives_everything_back():
    """The 48-port virtual chassis: ge-0/0/7 of DESKS (rstp edge, 802.1X, voice VLAN by the range's name) keeps them
    as its own (keep: [voice, dot1x]); HARMLESS owns the range, the port and those hierarchies while migrated, and
    down's three-way merge gives the original back, keeping an operator's later change elsewhere."""
    acc, trunk = access("ge-0/0/7"), [TrunkChange("ge-0/0/40", (105,))]
    cand = render_config(acc, trunk, current=VC_CAPTURE)
    for line in ('set interfaces ge-0/0/7 description "desk outlet"', "set protocols rstp interface ge-0/0/7 edge",
                 "set protocols dot1x authenticator interface ge-0/0/7 supplicant multiple",
                 "set switch-options voip interface ge-0/0/7 vlan VOICE"):
        assert line + "\n" in cand
    after = devdiff.merged(VC_CAPTURE, cand, "junos")
    p7 = port(after, "ge-0/0/7")
    assert (p7.access_vid, p7.voice_vid, p7.dot1x, p7.description) == (105, 60 + 5, True, "desk outlet") or \
        (p7.access_vid, p7.dot1x, p7.description) == (105, True, "desk outlet")
    assert port(after, "ge-0/0/7").voice_vid == port(VC_CAPTURE, "ge-0/0/7").voice_vid
    assert port(after, "ge-0/0/8").access_vid == port(VC_CAPTURE, "ge-0/0/8").access_vid
    syntax, orig, now = syntax_for("junos"), curly(VC_CAPTURE), curly(after)
    record = ow.record("junos", cand, orig, now, None)
    assert {"interfaces interface-range DESKS", "interfaces ge-0/0/7", "protocols rstp", "protocols dot1x",
            "switch-options voip"} <= {o.key for o in record.objects}
    edited = curly(devdiff.merged(after, "set system host-name ex4300-vc-b\n", "junos"))
    r = ow.plan_down("sw1", record, syntax, orig, edited, "orig.cfg")
    assert not r.conflicts and [c.label for c in r.kept] == ["system host-name"]
    assert syntax.units(r.target) == syntax.units(curly(devdiff.merged(VC_CAPTURE, "set system host-name "
                                                                                   "ex4300-vc-b\n", "junos")))


def test_a_range_left_without_members_goes_with_the_statements_naming_it():
    staff = {f"ge-0/0/{n}": False for n in range(12)}
    cmds = range_commands(EX2300, staff)
    assert cmds[:4] == ["delete interfaces interface-range STAFF", "delete protocols rstp interface STAFF",
                        "delete protocols dot1x authenticator interface STAFF",
                        "delete switch-options voip interface STAFF"]
    after = devdiff.merged(EX2300, "\n".join(cmds) + "\n", "junos")
    named = [p for p, _off in read_config(after)[0] if "STAFF" in p and p[p.index("STAFF") - 1] in
             ("interface", "interface-range")]
    assert named == []                                  # the VLAN STAFF stays (the uplink carries it)
    p = port(after, "ge-0/0/11")
    assert (p.voice_vid, p.dot1x, p.description) == (25, True, "staff desk")
    assert "set protocols rstp interface ge-0/0/11 edge" in p.unparsed


def test_a_shared_trunk_from_a_range_keeps_the_vlans_the_range_gave_it():
    """xe-1/0/5 of SERVERS (trunk of PROD and DEV, native VLAN 10) shared with the server: it leaves the range with
    its VLANs as its own and HARMLESS's added."""
    cand = render_config(access("xe-0/0/10"), [TrunkChange("xe-1/0/5", (105,), shared=True)], current=EX4600)
    assert 'delete interfaces interface-range SERVERS member "xe-1/0/[0-1,5]"\n' \
           "set interfaces interface-range SERVERS member-range xe-1/0/0 to xe-1/0/1\n" in cand
    before, after = port(EX4600, "xe-1/0/5"), port(devdiff.merged(EX4600, cand, "junos"), "xe-1/0/5")
    assert after.allowed_vids == tuple(sorted({*before.allowed_vids, 105})) and after.native_vid == before.native_vid
    assert after.description == "rack 14 servers"


def test_an_incremental_up_dropping_one_port_of_a_range_gives_the_range_back():
    """ge-0/0/5 and ge-0/0/6 of DESKS migrated. Rendered again from the config as HARMLESS found it (the driver's
    ``found_config``), the same plan gives the same candidate (up twice: nothing to give back). The inventory then
    drops ge-0/0/6: the range (and the port) go back first, so the new render puts ge-0/0/6 back into DESKS, as a
    fresh up of the final inventory would."""
    two = (access("ge-0/0/5", "ge-0/0/6"), [TrunkChange("ge-0/0/20", (105, 106))])
    one = (access("ge-0/0/5"), [TrunkChange("ge-0/0/20", (105,))])
    cand = render_config(*two, current=DISPLAY_SET)
    after = devdiff.merged(DISPLAY_SET, cand, "junos")
    record = ow.record("junos", cand, curly(DISPLAY_SET), curly(after), None)
    found = ow.found_config(record, curly(after))
    assert render_config(*two, current=found) == cand and not ow.dropped(record, cand)
    assert render_config(*two, current=after).count("interface-range") == 0     # from the running config: lost
    smaller = render_config(*one, current=found)
    keys = ow.dropped(record, smaller)
    assert "interfaces ge-0/0/6" in keys and "interfaces interface-range DESKS" not in keys
    keys += ow.entangled(record, keys)
    assert "interfaces interface-range DESKS" in keys
    given_back, m = ow.plan_revert(record, curly(after), keys)
    assert not m.conflicts
    again = devdiff.merged(given_back, render_config(*one, current=found), "junos")
    assert port(again, "ge-0/0/6").access_vid == 100 and port(again, "ge-0/0/5").access_vid == 105
    fresh = devdiff.merged(DISPLAY_SET, render_config(*one, current=DISPLAY_SET), "junos")
    assert sorted(read_config(again)[0]) == sorted(read_config(fresh)[0])       # as a fresh up of the final one


# ----------------------------------------------------------------------------- wildcards, ranges across VC members
#: an EX4300 two-member virtual chassis as `show configuration` prints it: the phones' range by wildcard (``*`` is 0
#: through 47, Juniper "Interface Ranges for Physical Interfaces"), a range across both members (``member-range`` in
#: interface order, the documentation's own example spans FPCs), a list member with an inactive description
VC_WILDCARDS = """## Last commit: 2026-03-02 08:14:07 UTC by netops
version 21.4R3-S5.4;
system {
    host-name ex4300-vc-c;
}
interfaces {
    /* every port of member 1 is a phone desk */
    interface-range PHONES {
        member "ge-1/0/*";
        unit 0 {
            family ethernet-switching {
                interface-mode access;
                vlan {
                    members VOICE-DATA;
                }
                storm-control default;
            }
        }
    }
    interface-range LAB {
        member-range ge-0/0/40 to ge-1/0/3;
        mtu 9216;
        unit 0 {
            family ethernet-switching {
                vlan {
                    members LAB;
                }
            }
        }
    }
    interface-range PRINTERS {
        member "ge-0/0/[1,3,5]";
        inactive: description "printer drop";
        unit 0 {
            family ethernet-switching {
                vlan {
                    members PRINT;
                }
            }
        }
    }
    ge-0/0/3 {
        description "MFP 2F east";
    }
    ge-0/0/44 {
        description "lab bench 4";
    }
    ge-0/1/2 {
        description "lab uplink module";
    }
    ge-1/0/0 {
        description "lab bench 9";
    }
    xe-0/2/0 {
        unit 0 {
            family ethernet-switching {
                interface-mode trunk;
                vlan {
                    members [ VOICE-DATA LAB PRINT ];
                }
            }
        }
    }
}
protocols {
    rstp {
        interface PHONES {
            edge;
        }
        interface LAB;
    }
}
vlans {
    LAB {
        vlan-id 40;
    }
    PRINT {
        vlan-id 50;
    }
    VOICE-DATA {
        vlan-id 20;
    }
}
"""


def test_a_wildcard_member_stands_for_ports_0_to_47_and_the_port_leaves_it():
    """``member "ge-1/0/*"`` (beside an annotation, whose ``/*`` starts a comment while the member's does not): ge-1/0/12
    gets VOICE-DATA from the range, so without leaving it it would be in two VLANs; after the render it is in its
    HARMLESS VLAN only, every other port 0-47 of member 1 stays in PHONES, and it keeps the rstp edge named by the
    range."""
    assert port(VC_WILDCARDS, "ge-1/0/12").access_vid == 20 and port(VC_WILDCARDS, "ge-1/0/47").access_vid == 20
    assert port(VC_WILDCARDS, "ge-1/0/48") is None
    cand = render_config(access("ge-1/0/12"), [TrunkChange("ge-0/0/30", (105,))], current=VC_WILDCARDS)
    assert ('delete interfaces interface-range PHONES member "ge-1/0/*"\n'
            "set interfaces interface-range PHONES member-range ge-1/0/0 to ge-1/0/11\n"
            "set interfaces interface-range PHONES member-range ge-1/0/13 to ge-1/0/47\n") in cand
    assert "set protocols rstp interface ge-1/0/12 edge\n" in cand
    after = devdiff.merged(VC_WILDCARDS, cand, "junos")
    p12 = port(after, "ge-1/0/12")
    assert (p12.mode, p12.access_vid) == ("access", 105)
    assert "set interfaces ge-1/0/12 unit 0 family ethernet-switching storm-control default" in p12.unparsed
    assert {port(after, f"ge-1/0/{n}").access_vid for n in (*range(12), *range(13, 48))} == {20}


def test_a_member_range_across_vc_members_is_split_around_the_migrated_ports_only():
    """LAB spans ge-0/0/40 to ge-1/0/3 in interface order, which takes in the uplink module's ge-0/1/* too: migrating
    ge-0/0/44 and ge-1/0/0 splits it around them (``ge-0/0/45 to ge-0/3/47`` keeps every port of member 0 after 44,
    the module's included), never shrinking it to its ends; the ports keep the range's MTU and rstp."""
    assert port(VC_WILDCARDS, "ge-0/0/44").access_vid == 40 and port(VC_WILDCARDS, "ge-0/1/2").access_vid == 40
    cand = render_config(access("ge-0/0/44", "ge-1/0/0"), [TrunkChange("ge-0/0/30", (105, 106))],
                         current=VC_WILDCARDS)
    assert ("delete interfaces interface-range LAB member-range ge-0/0/40 to ge-1/0/3\n"
            "set interfaces interface-range LAB member-range ge-0/0/40 to ge-0/0/43\n"
            "set interfaces interface-range LAB member-range ge-0/0/45 to ge-0/3/47\n"
            "set interfaces interface-range LAB member-range ge-1/0/1 to ge-1/0/3\n") in cand
    for name in ("ge-0/0/44", "ge-1/0/0"):
        assert f"set interfaces {name} mtu 9216\n" in cand and f"set protocols rstp interface {name}\n" in cand
    after = devdiff.merged(VC_WILDCARDS, cand, "junos")
    assert (port(after, "ge-0/0/44").access_vid, port(after, "ge-1/0/0").access_vid) == (105, 106)
    assert port(after, "ge-0/1/2").access_vid == 40 and port(after, "ge-0/0/43").access_vid == 40
    # ge-1/0/0 is in PHONES as well (ge-1/0/*): it leaves that range too, with its storm control
    assert "set interfaces interface-range PHONES member-range ge-1/0/1 to ge-1/0/47\n" in cand


def test_a_list_member_keeps_the_range_statements_inactive_as_they_were():
    """PRINTERS' description is inactive: ge-0/0/1 gets it deactivated (by the statement's name, as Junos takes it),
    ge-0/0/3 keeps its own description (single-valued) and the list shrinks to the other printer."""
    cand = render_config(access("ge-0/0/1", "ge-0/0/3"), [TrunkChange("ge-0/0/30", (105, 106))],
                         current=VC_WILDCARDS)
    assert ('delete interfaces interface-range PRINTERS member "ge-0/0/[1,3,5]"\n'
            "set interfaces interface-range PRINTERS member ge-0/0/5\n"
            'set interfaces ge-0/0/1 description "printer drop"\n'
            "deactivate interfaces ge-0/0/1 description\n") in cand
    assert "ge-0/0/3 description" not in cand
    after = devdiff.merged(VC_WILDCARDS, cand, "junos")
    assert port(after, "ge-0/0/3").description == "MFP 2F east"
    assert port(after, "ge-0/0/5").access_vid == 50 and port(after, "ge-0/0/3").access_vid == 106
