"""Link-local protocols through the legacy switch (issue #21, pure): the inventory field, the planner's choices and
findings, every vendor's render and parser, the emulated Catalyst's commands and its data plane's flows."""
from __future__ import annotations

import typing

import pytest
import yaml

from harmless.errors import InputError, Refused
from harmless.inventory import parse_inventory
from harmless.inventory.model import L2ptProtocol
from harmless.plan import Plan, make_plan, plan_with_findings
from harmless.switch_drivers import l2pt
from harmless.switch_drivers.base import AccessPortChange, Capabilities, DeviceFacts, TrunkChange

IFACES = tuple(f"FastEthernet0/{i}" for i in range(1, 25)) + ("GigabitEthernet0/1",)
TUNNEL = "01:00:0c:cd:cd:d0"
CISCO = Capabilities(l2pt=("cdp", "stp", "vtp", "lacp", "pagp", "udld"), l2pt_mac=TUNNEL,
                     l2pt_source="Catalyst 3750-X and 3560-X Software Configuration Guide")


def inv(ports=("FastEthernet0/7", "FastEthernet0/8"), **extra):
    sw = {"name": "sw1", "driver": "ios", "host": "h", "username": "u", "password_env": "X",
          "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1"}],
          "access_ports": list(ports), "vlan_range": "100-199", **extra}
    return parse_inventory(yaml.safe_dump({"switches": [sw]}), "inv.yaml")


def plan(inventory, caps=CISCO, model="WS-C3750G-24TS-1U"):
    """``(plan, {kind: [(severity, problem)]})``: the plan and its link-local findings by kind (the port-down and
    MAC-learning findings of a driver without those capabilities are tests/unit/test_portmod.py's)."""
    p, found = plan_with_findings(inventory, {"sw1": DeviceFacts("sw1", model, "12.2", IFACES, {1: "default"})},
                                  caps={"sw1": caps})
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for x in found:
        if x.kind not in ("mac-learning-on", "mac-learning-unknown", "port-down-server-only"):
            by_kind.setdefault(x.kind, []).append((x.severity, x.problem))
    return p, by_kind


# ----------------------------------------------------------------------------- protocol table and inventory
def test_the_inventory_names_are_the_protocol_table():
    assert set(typing.get_args(L2ptProtocol)) == set(l2pt.PROTOCOLS)
    assert l2pt.PROTOCOLS["lldp"].dst == "01:80:c2:00:00:0e" and l2pt.PROTOCOLS["lldp"].eth_type == 0x88CC
    assert l2pt.PROTOCOLS["lacp"].eth_type == 0x8809 and l2pt.PROTOCOLS["stp"].eth_type == l2pt.LLC == 0x05FF


def test_restore_groups_refuse_two_llc_destinations():
    assert l2pt.restore_groups(("cdp", "vtp", "lldp")) == [(0x88CC, "01:80:c2:00:00:0e", ("lldp",)),
                                                           (0x05FF, "01:00:0c:cc:cc:cc", ("cdp", "vtp"))]
    with pytest.raises(ValueError, match="stp and cdp are both 802.3 LLC"):
        l2pt.restore_groups(("stp", "cdp"))
    assert l2pt.tunnel_dsts(("stp",)) == [("01:80:c2:00:00:00", 0x05FF), ("01:00:0c:cc:cc:cd", 0x05FF)]


def test_switch_l2pt_applies_to_ports_without_their_own():
    i = inv(ports=["FastEthernet0/7", {"interface": "FastEthernet0/8", "l2pt": []},
                   {"interface": "FastEthernet0/9", "l2pt": ["cdp"]}], l2pt=["stp", "lacp"])
    sw = i.switches[0]
    assert [sw.l2pt_of(p) for p in sw.access_ports] == [("stp", "lacp"), (), ("cdp",)]


@pytest.mark.parametrize("l2pt_value, words", [(["lldpp"], "should be 'lldp', 'stp'"), (["lldp", "lldp"], "listed twice"),
                                               ("lldp", "valid list")])
def test_bad_l2pt_names_the_field(l2pt_value, words):
    with pytest.raises(InputError) as e:
        inv(ports=[{"interface": "FastEthernet0/7", "l2pt": l2pt_value}])
    assert "access_ports[0].l2pt" in str(e.value) and words in str(e.value)


# ----------------------------------------------------------------------------- planner
def test_plan_keeps_what_the_device_can_tunnel_and_warns_of_the_rest():
    p, found = plan(inv(l2pt=["lldp", "stp"]))
    sp = p.switches[0]
    assert [x.l2pt for x in sp.ports] == [("stp",), ("stp",)] and sp.l2pt_mac == TUNNEL
    assert sp.access_changes()[0].l2pt == ("stp",)
    [(sev, problem)] = found["l2pt-unsupported"]                # one warning naming both ports
    assert sev == "warning" and problem.startswith("sw1 FastEthernet0/7, FastEthernet0/8: lldp will not be "
                                                   "transparent: WS-C3750G-24TS-1U cannot tunnel it (Catalyst 3750-X")
    [(sev, problem)] = found["l2pt-stp"]
    assert sev == "note" and "no longer receives BPDUs" in problem and "FastEthernet0/7, FastEthernet0/8" in problem
    assert Plan.from_dict(p.to_dict()) == p                      # the state file keeps l2pt and the MAC


def test_a_switch_that_cannot_tunnel_gets_a_warning_not_a_refusal():
    caps = Capabilities(l2pt=(), l2pt_source="ArubaOS-Switch/ProVision has no Layer 2 protocol tunnelling")
    p, found = plan(inv(l2pt=["lldp"]), caps=caps, model="J9772A")
    sp = p.switches[0]
    assert [x.l2pt for x in sp.ports] == [(), ()] and sp.l2pt_mac is None
    assert found == {"l2pt-unsupported": [("warning", "sw1 FastEthernet0/7, FastEthernet0/8: lldp will not be "
                                           "transparent: J9772A cannot tunnel it (ArubaOS-Switch/ProVision has no "
                                           "Layer 2 protocol tunnelling)")]}


def test_unknown_platform_plans_everything_and_says_the_device_decides():
    p, found = plan(inv(l2pt=["lldp"]), caps=Capabilities(l2pt=None, l2pt_mac=TUNNEL), model="WS-C2960-24TT-L")
    assert [x.l2pt for x in p.switches[0].ports] == [("lldp",), ("lldp",)]
    assert found == {"l2pt-capability-unknown": [("warning", "sw1: cannot tell which link-local protocols "
                                                  "WS-C2960-24TT-L tunnels: the device rejects at commit any it "
                                                  "cannot (up then changes nothing)")]}


def test_no_l2pt_no_findings_no_mac():
    p, found = plan(inv())
    sp = p.switches[0]
    assert found == {} and sp.l2pt_mac is None and all(x.l2pt == () for x in sp.ports)


@pytest.mark.parametrize("extra, ports, field", [
    ({"l2pt": ["stp", "cdp"]}, ("FastEthernet0/7",), "switches[0].l2pt"),
    ({}, ({"interface": "FastEthernet0/7", "l2pt": ["stp", "vtp"]},), "switches[0].access_ports[0].l2pt")])
def test_llc_protocols_the_translator_cannot_tell_apart_are_refused(extra, ports, field):
    with pytest.raises(Refused) as e:
        plan(inv(ports=ports, **extra))
    [r] = e.value.refusals
    assert r.kind == "l2pt-ambiguous" and r.where.endswith(field) and "tunnel either stp or" in r.fix
    assert r.port == "FastEthernet0/7" and r.switch == "sw1"


def test_every_ambiguous_port_is_refused_at_once_with_the_other_refusals():
    ports = [{"interface": "FastEthernet0/7", "l2pt": ["stp", "vtp"]}, "FastEthernet0/30",
             {"interface": "FastEthernet0/9", "l2pt": ["stp", "cdp"]}]
    with pytest.raises(Refused) as e:
        plan(inv(ports=ports))
    assert [(r.kind, r.where.split(": ")[1]) for r in e.value.refusals] == [
        ("unknown-interface", "switches[0].access_ports[1]"), ("l2pt-ambiguous", "switches[0].access_ports[0].l2pt"),
        ("l2pt-ambiguous", "switches[0].access_ports[2].l2pt")]


def test_a_switch_that_keeps_the_destination_needs_no_rewrite_and_may_mix():
    eos = Capabilities(l2pt=("lldp", "stp", "lacp"), l2pt_mac=None, l2pt_caveat="check the TCAM profile")
    p, found = plan(inv(l2pt=["lldp", "stp"]), caps=eos, model="DCS-7280SR-48C6")
    sp = p.switches[0]
    assert sp.l2pt_mac is None and sp.ports[0].l2pt == ("lldp", "stp")
    assert found["l2pt-caveat"] == [("warning", "sw1: check the TCAM profile")]


# ----------------------------------------------------------------------------- IOS
def test_ios_render_tunnels_after_the_mode_and_removes_what_the_inventory_drops():
    from harmless.switch_drivers.ios.render import render_config
    current = ("interface FastEthernet0/7\n switchport mode access\n l2protocol-tunnel cdp\n"
               " l2protocol-tunnel shutdown-threshold cdp 100\n!\ninterface GigabitEthernet0/1\n switchport mode trunk\n!\n")
    access = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7", l2pt=("lacp", "lldp"))]
    trunks = [TrunkChange("GigabitEthernet0/1", (107,))]
    text = render_config(access, trunks, current=current)
    block = text[text.index("interface FastEthernet0/7"):].split("!")[0].splitlines()
    assert block == ["interface FastEthernet0/7", " no l2protocol-tunnel cdp", " switchport mode access",
                     " switchport access vlan 107", " l2protocol-tunnel lldp", " l2protocol-tunnel point-to-point lacp"]
    assert "l2protocol-tunnel" not in text.split("interface GigabitEthernet0/1")[1]     # never on the trunk (bypass)
    # against the config it produces, the render has no cleanup left (a second merge is empty)
    after = ("interface FastEthernet0/7\n switchport access vlan 107\n switchport mode access\n"
             " l2protocol-tunnel lldp\n l2protocol-tunnel point-to-point lacp\n"
             " l2protocol-tunnel shutdown-threshold cdp 100\n!\n")
    assert " no " not in render_config(access, trunks, current=after)
    with pytest.raises(ValueError, match="unknown link-local protocol"):
        render_config([AccessPortChange("FastEthernet0/7", 107, "x", l2pt=("gvrp",))], trunks)


def test_ios_model_reads_every_l2protocol_tunnel_form():
    from harmless.switch_drivers.ios.model import parse_model
    cfg = ("interface FastEthernet0/1\n switchport mode access\n l2protocol-tunnel\n!\n"
           "interface FastEthernet0/2\n switchport mode dot1q-tunnel\n l2protocol-tunnel point-to-point\n"
           " l2protocol-tunnel lldp\n l2protocol-tunnel drop-threshold 500\n!\n"
           "interface FastEthernet0/3\n switchport mode access\n!\n")
    ports = {p.interface: p for p in parse_model(cfg).ports}
    assert ports["FastEthernet0/1"].l2pt == ("stp", "cdp", "vtp") and ports["FastEthernet0/1"].unparsed == ()
    assert ports["FastEthernet0/2"].l2pt == ("lldp", "lacp", "pagp", "udld")
    assert ports["FastEthernet0/2"].unparsed == ("l2protocol-tunnel drop-threshold 500",)
    assert ports["FastEthernet0/3"].l2pt == () and "l2pt" not in ports["FastEthernet0/3"].to_json_dict()
    assert ports["FastEthernet0/2"].to_json_dict()["l2pt"] == ["lldp", "lacp", "pagp", "udld"]


def test_ios_replace_bridge_drops_tunnelling_before_a_port_goes_dynamic():
    from harmless.switch_drivers.ios.hazards import replace_bridge
    running = ("interface FastEthernet0/7\n switchport access vlan 107\n switchport mode access\n"
               " switchport nonegotiate\n l2protocol-tunnel lldp\n!\nend\n")
    original = "interface FastEthernet0/7\n switchport nonegotiate\n!\nend\n"
    assert replace_bridge(running, original).splitlines() == [
        "interface FastEthernet0/7", " no l2protocol-tunnel lldp", " no switchport nonegotiate", " no switchport mode",
        "!", "end"]


@pytest.mark.parametrize("model, version, protos", [
    ("ME-C3750-24TE-M", "C3750ME Software (C3750ME-I5K91-M), Version 12.2(58)SE2", "lldp"),
    ("ME-C3750-24TE-M", "Version 12.2(55)SE", "cdp"),
    ("WS-C3750G-24TS-1U", "Version 12.2(58)SE2", "cdp"),
    ("WS-C2960-24TT-L", "Version 12.2(58)SE2", None),
    ("C9300-48P", "Version 17.3.4", "cdp")])
def test_ios_platform_table(model, version, protos):
    from harmless.switch_drivers.ios.platforms import l2pt_support
    got, source = l2pt_support(model, version)
    if protos is None:
        assert got is None and source == ""
        return
    assert protos in got and ("lldp" in got) == (protos == "lldp") and source


# ----------------------------------------------------------------------------- EOS and Junos
def test_eos_profiles_forward_untagged_on_the_port_and_tagged_on_its_trunk():
    from harmless.switch_drivers.eos.model import parse_model
    from harmless.switch_drivers.eos.render import render_config
    access = [AccessPortChange("Ethernet7", 107, "harmless-sw1-p7", l2pt=("lacp", "lldp")),
              AccessPortChange("Ethernet8", 108, "harmless-sw1-p8")]
    text = render_config(access, [TrunkChange("Ethernet1", (107, 108)), TrunkChange("Ethernet2", (108,))])
    assert ("l2-protocol\n   forwarding profile harmless-lldp-lacp\n      lldp untagged forward\n"
            "      lacp untagged forward\n   forwarding profile harmless-tagged-lldp-lacp\n"
            "      lldp tagged forward\n      lacp tagged forward\n!\n") in text
    e1 = text[text.index("interface Ethernet1"):].split("!")[0]
    e2 = text[text.index("interface Ethernet2"):].split("!")[0]
    assert "l2-protocol forwarding profile harmless-tagged-lldp-lacp" in e1 and "l2-protocol" not in e2
    assert "l2-protocol" not in text[text.index("interface Ethernet8"):].split("!")[0]
    ports = {p.interface: p for p in parse_model(text).ports}
    assert ports["Ethernet7"].l2pt == ("lldp", "lacp") and ports["Ethernet7"].unparsed == ()
    with pytest.raises(ValueError, match="EOS does not forward cdp"):
        render_config([AccessPortChange("Ethernet7", 107, "x", l2pt=("cdp",))], [])


def test_junos_els_mac_rewrite_and_the_model_reading_it():
    from harmless.switch_drivers.junos.model import parse_model
    from harmless.switch_drivers.junos.render import render_config
    access = [AccessPortChange("ge-0/0/7", 107, "hl107", l2pt=("stp", "lldp")),
              AccessPortChange("ge-0/0/8", 108, "hl108")]
    text = render_config(access, [TrunkChange("ge-0/0/1", (107, 108))], tunnelled={"ge-0/0/8"})
    assert [ln for ln in text.splitlines() if "layer2-control" in ln] == [
        "delete protocols layer2-control mac-rewrite interface ge-0/0/7",
        "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol lldp",
        "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol stp",
        "delete protocols layer2-control mac-rewrite interface ge-0/0/8"]
    assert "layer2-control" not in render_config(access[1:], [TrunkChange("ge-0/0/1", (108,))])
    with pytest.raises(ValueError, match="non-ELS"):
        render_config(access, [], syntax="legacy")
    cfg = ("set interfaces ge-0/0/7 unit 0 family ethernet-switching interface-mode access\n"
           "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol lldp\n"
           "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol elmi\n")
    port = parse_model(cfg).port("ge-0/0/7")
    assert port.l2pt == ("lldp",) and port.unparsed == (
        "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol elmi",)


def test_a_shared_shut_trunk_keeps_its_vlans_comes_up_and_the_port_still_tunnels():
    from harmless.switch_drivers.eos.render import render_config as eos
    from harmless.switch_drivers.ios.render import render_config as ios
    from harmless.switch_drivers.junos.render import render_config as junos
    trunk = TrunkChange("Ethernet1", (107,), shared=True, bring_up=True)
    text = eos([AccessPortChange("Ethernet7", 107, "harmless-sw1-p7", l2pt=("lldp",))], [trunk])
    assert text[text.index("interface Ethernet1"):].split("!")[0].splitlines() == [
        "interface Ethernet1", "   switchport mode trunk", "   switchport trunk allowed vlan add 107",
        "   l2-protocol forwarding profile harmless-tagged-lldp", "   no shutdown"]
    text = ios([AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7", l2pt=("stp",))],
               [TrunkChange("GigabitEthernet0/1", (107,), shared=True, bring_up=True)])
    assert " l2protocol-tunnel stp" in text.split("interface GigabitEthernet0/1")[0]
    assert text.split("interface GigabitEthernet0/1")[1].split("!")[0].splitlines()[1:] == [
        " switchport mode trunk", " switchport trunk allowed vlan add 107", " no shutdown"]
    text = junos([AccessPortChange("ge-0/0/7", 107, "hl107", l2pt=("lldp",))],
                 [TrunkChange("ge-0/0/1", (107,), shared=True, bring_up=True)])
    assert "set protocols layer2-control mac-rewrite interface ge-0/0/7 protocol lldp" in text
    assert "delete interfaces ge-0/0/1 disable" in text
    assert "delete interfaces ge-0/0/1 unit 0 family ethernet-switching" not in text


# ----------------------------------------------------------------------------- the emulated Catalyst
@pytest.fixture()
def catalyst():
    pytest.importorskip("fake_switches")
    import logging

    from fake_switches import switch_factory
    from fake_switches.command_processing.piping_processor_base import NotPipingProcessor
    from fake_switches.terminal import NoopTerminalController

    from harmless.emulators import ios
    ios.install()

    def make(platform):
        core = switch_factory.SwitchFactory().get(ios.MODEL, "sw1", "pw")
        ios.set_platform(core.switch_configuration, platform)
        proc = core.new_command_processor()
        proc.init(core.switch_configuration, NoopTerminalController(), logging.getLogger("t"), NotPipingProcessor())
        return core.switch_configuration, proc
    return make


@pytest.mark.parametrize("platform, refused", [
    ("2960", ["l2protocol-tunnel lldp", "l2protocol-tunnel stp", "l2protocol-tunnel point-to-point lacp"]),
    ("3750", ["l2protocol-tunnel lldp"]),
    ("me3750", [])])
def test_emulated_platforms_tunnel_what_their_documents_say(catalyst, platform, refused):
    from harmless.emulators import ios
    sc, proc = catalyst(platform)
    bad = ios.apply_config_text(proc, "interface FastEthernet0/7\n switchport mode access\n l2protocol-tunnel lldp\n"
                                      " l2protocol-tunnel stp\n l2protocol-tunnel point-to-point lacp\n")
    assert bad == refused
    text = ios.running_config_text(sc)
    kept = [ln.strip() for ln in text[text.index("interface FastEthernet0/7"):].split("!")[0].splitlines()
            if "l2protocol" in ln]
    assert kept == [x for x in ("l2protocol-tunnel lldp", "l2protocol-tunnel stp",
                                "l2protocol-tunnel point-to-point lacp") if x not in refused]


def test_emulated_catalyst_refuses_tunnelling_on_a_dynamic_port(catalyst):
    from harmless.emulators import ios
    sc, proc = catalyst("me3750")
    got = ios.apply_config_detailed(proc, "interface FastEthernet0/7\n l2protocol-tunnel lldp\n")
    assert got == [("l2protocol-tunnel lldp", ios.L2PT_NOT_STATIC % "FastEthernet0/7")]


def test_dataplane_flows_tunnel_in_restore_out_and_only_for_tunnel_ports():
    from harmless.emulators.dataplane import L2PT_COOKIE, l2pt_bundle, l2pt_flows
    ports = {"fa0-7": {"vlan_mode": "access", "tag": 107, "trunks": [], "l2pt": ["lldp"]},
             "fa0-8": {"vlan_mode": "access", "tag": 108, "trunks": []},
             "gi0-1": {"vlan_mode": "native-untagged", "tag": 1, "trunks": [107, 108]}}
    c = f"cookie={L2PT_COOKIE:#x}"
    assert l2pt_flows(ports) == [
        f"{c},priority=300,in_port=fa0-7,dl_dst={TUNNEL},actions=drop",
        f"{c},priority=200,in_port=fa0-7,dl_dst=01:80:c2:00:00:0e,dl_type=0x88cc,actions=mod_dl_dst:{TUNNEL},NORMAL",
        f"{c},priority=200,in_port=gi0-1,dl_vlan=107,dl_dst={TUNNEL},dl_type=0x88cc,"
        "actions=strip_vlan,mod_dl_dst:01:80:c2:00:00:0e,output:fa0-7"]
    assert l2pt_flows({k: v for k, v in ports.items() if k != "fa0-7"}) == []
    assert l2pt_bundle([]) == f"delete {c}/-1\n"


@pytest.mark.parametrize("now, want, inventory, fix", [
    (("cdp",), ["vtp"], "{interface: FastEthernet0/7, l2pt: [vtp, cdp]}", "to keep it, write the port as {inv}"),
    (("cdp", "stp"), ["stp"], None, "it cannot keep both (stp and cdp are both 802.3 LLC")])
def test_a_tunnel_the_port_has_now_and_the_inventory_drops_is_a_warning(now, want, inventory, fix):
    from harmless.switch_drivers.ios.model import parse_model
    model = parse_model("interface FastEthernet0/7\n switchport mode access\n"
                        + "".join(f" l2protocol-tunnel {x}\n" for x in now) + "!\ninterface FastEthernet0/8\n"
                        " switchport mode access\n!\ninterface GigabitEthernet0/1\n switchport mode trunk\n!\n"
                        "vtp mode transparent\n")
    f = {"sw1": DeviceFacts("sw1", "WS-C3750G-24TS-1U", "12.2", IFACES, {1: "default"}, port_model=model)}
    _, found = plan_with_findings(inv(l2pt=want), f, caps={"sw1": CISCO})
    [d] = [x for x in found if x.kind == "l2pt-dropped"]           # FastEthernet0/8 tunnels nothing now
    assert d.severity == "warning" and d.port == "FastEthernet0/7" and d.where.endswith("switches[0].l2pt")
    assert d.problem == ("sw1 FastEthernet0/7 tunnels cdp now; migrated it will not (HARMLESS sets exactly the "
                         "port's l2pt)")
    assert d.inventory == inventory and d.fix.startswith(fix.format(inv=inventory))


def test_ios_unapplied_sees_tunnelling_the_device_refused_or_kept():
    from harmless.switch_drivers.ios.driver import unapplied
    cand = ("interface FastEthernet0/7\n no l2protocol-tunnel cdp\n switchport mode access\n"
            " switchport access vlan 107\n l2protocol-tunnel lldp\n!\nvlan 107\n!\n")
    ok = "vlan 107\n!\ninterface FastEthernet0/7\n switchport access vlan 107\n switchport mode access\n" \
         " l2protocol-tunnel lldp\n!\n"
    assert unapplied(cand, ok) == []
    refused = ok.replace(" l2protocol-tunnel lldp\n", " l2protocol-tunnel cdp\n")
    assert unapplied(cand, refused) == ["FastEthernet0/7 l2protocol-tunnel lldp (device: not tunnelled)",
                                        "FastEthernet0/7 no l2protocol-tunnel cdp (device: still tunnelled)"]


def test_eos_removes_only_profiles_that_are_no_longer_asked_for():
    from harmless.switch_drivers.eos.render import profiles_now, render_config
    now = profiles_now("interface Ethernet7\n   l2-protocol forwarding profile harmless-lldp\n!\n"
                       "interface Ethernet1\n   l2-protocol forwarding profile harmless-tagged-lldp\n!\n"
                       "interface Ethernet2\n   l2-protocol forwarding profile ops-uplink\n!\n")
    assert now == {"Ethernet7": "harmless-lldp", "Ethernet1": "harmless-tagged-lldp", "Ethernet2": "ops-uplink"}
    text = render_config([AccessPortChange("Ethernet7", 107, "harmless-sw1-p7")],
                         [TrunkChange("Ethernet1", (107,)), TrunkChange("Ethernet2", (107,))], profiled=now)
    blocks = {b.split("\n")[0]: b for b in text.split("!\n")}
    assert "no l2-protocol forwarding profile" in blocks["interface Ethernet7"]
    assert "no l2-protocol forwarding profile" in blocks["interface Ethernet1"]
    assert "l2-protocol" not in blocks["interface Ethernet2"] and "\nl2-protocol\n" not in text
