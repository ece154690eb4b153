"""Offline planning (``harmless plan --config SW=FILE``) for all four OSes, on the realistic configs of the port
corpus (``ports_corpus/<driver>/*.cfg``):

* the reading gaps of issue #25, each on a config shaped like the real one: a Catalyst 6500 in native IOS (a port
  without ``switchport`` is routed), an EOS ``trunk phone`` port's native VLAN, an allowed-VLAN list with a space, the
  SVI carrying the management address (IOS/EOS SVI, Junos ``irb``, ProCurve VLAN address), a Junos ``show
  configuration`` capture with its CLI context lines, a 5400R chassis with interconnect ports (``C1i``), and
  configs with a bad section (read, the line listed, the plan refused naming it);
* Junos and ProCurve planned offline end to end (plan, rendered candidate, local diff);
* the sweep: every port of every corpus config planned offline as the only access port: a port that is not a plain
  access port is refused, and the refusal names the port and what it is; a plain one is planned on a VID the switch
  does not use.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harmless import offline
from harmless.errors import InputError
from harmless.inventory import parse_inventory
from harmless.plan import make_plan
from harmless.switch_drivers import names
from harmless.switch_drivers.models import parse_model
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel

CORPUS = Path(__file__).parent / "ports_corpus"
CONFIGS = sorted(CORPUS.glob("*/*.cfg"))


def inventory(driver: str, access: list, trunk: str, host: str = "192.0.2.10", shared: bool = False, **switch):
    """A one-switch inventory ``sw1``; ``access`` items are interface names or AccessPort dicts; ``shared``: the
    trunk is shared on purpose (preflight then accepts a trunk port that is a LAG or carries other VLANs)."""
    sw = {"name": "sw1", "driver": driver, "host": host, "username": "netops", "password_env": "OF_UNUSED",
          "trunks": [{"switch_port": trunk, "server_interface": "ofeth1", **({"shared": True} if shared else {})}],
          "access_ports": access, **switch}
    return parse_inventory(yaml.safe_dump({"switches": [sw]}), "inv.yaml")


def plan(monkeypatch, tmp_path, cfg: str, access: list, trunk: str, **kw):
    """``plan_offline`` of ``ports_corpus/<cfg>`` for sw1 (driver = the corpus folder); a fresh state dir."""
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path / "state"))
    inv = inventory(cfg.split("/")[0], access, trunk, **kw)
    return offline.plan_offline(inv, "inv.yaml", {"sw1": CORPUS / cfg})


def refusal(monkeypatch, tmp_path, cfg: str, access: list, trunk: str, **kw) -> str:
    with pytest.raises(InputError) as e:
        plan(monkeypatch, tmp_path, cfg, access, trunk, **kw)
    return str(e.value)


def vids(res) -> dict[str, int]:
    return {p.interface: p.vid for p in res.plan.switches[0].ports}


# ----------------------------------------------------------------------------- Catalyst 6500, native IOS
C6509 = "ios/c6509_native_routed_default.cfg"


def test_6500_port_without_switchport_is_routed_and_refused(monkeypatch, tmp_path):
    model = parse_model("ios", (CORPUS / C6509).read_text())
    modes = {p.interface: p.mode for p in model.ports}
    # the platform prints a bare `switchport` on its layer-2 ports: without one a port is layer 3
    assert modes["GigabitEthernet1/4"] == modes["GigabitEthernet5/1"] == modes["Port-channel2"] == "routed"
    assert modes["GigabitEthernet1/5"] == "access" and modes["GigabitEthernet1/9"] == "dynamic"
    msg = refusal(monkeypatch, tmp_path, C6509, ["GigabitEthernet1/4"], "GigabitEthernet1/9")
    assert "switches[0].access_ports[0]" in msg and "sw1 GigabitEthernet1/4 is a routed port" in msg
    res = plan(monkeypatch, tmp_path, C6509, ["GigabitEthernet1/5"], "GigabitEthernet1/9")
    assert vids(res) == {"GigabitEthernet1/5": 105}
    # an ISL-capable platform: the trunk gets its encapsulation line before the mode
    assert " +switchport trunk encapsulation dot1q" in res.diffs["sw1"]


def test_switch_that_prints_no_bare_switchport_keeps_ports_layer_2():
    # a 4500 prints `switchport` on a Port-channel only: its physical ports stay layer 2 by default
    model = parse_model("ios", (CORPUS / "ios/c4500x_compressed_vlans.cfg").read_text())
    assert {p.interface: p.mode for p in model.ports}["TenGigabitEthernet1/3"] == "trunk"
    text = "vtp mode transparent\ninterface GigabitEthernet0/1\n description spare\ninterface GigabitEthernet0/2\n" \
           " switchport mode access\n"
    assert [p.mode for p in parse_model("ios", text).ports] == ["dynamic", "access"]


# ----------------------------------------------------------------------------- EOS: trunk phone, spaced list
EOS_PHONES = "eos/phones_trunk_phone_native.cfg"


def test_eos_trunk_phone_native_vlan_is_never_a_harmless_vid(monkeypatch, tmp_path):
    model = parse_model("eos", (CORPUS / EOS_PHONES).read_text())
    phone = model.port("Ethernet1")
    assert (phone.mode, phone.native_vid, phone.voice_vid) == ("unknown", 100, 200)
    assert 100 in model.vlans                          # the PCs behind the phones
    # ofport 1 in 99-120 would be VID 100; 99 (management) and 100 (the phones' PCs) are in use: 101
    res = plan(monkeypatch, tmp_path, EOS_PHONES, [{"interface": "Ethernet4", "ofport": 1}], "Ethernet5",
               vlan_range="99-120")
    assert vids(res) == {"Ethernet4": 101}
    msg = refusal(monkeypatch, tmp_path, EOS_PHONES, [{"interface": "Ethernet4", "vid": 100}], "Ethernet5")
    assert "access_ports[0].vid" in msg and "VID 100 is already used" in msg
    msg = refusal(monkeypatch, tmp_path, EOS_PHONES, ["Ethernet1"], "Ethernet5")
    assert "sw1 Ethernet1 is a switch port of a mode HARMLESS does not handle (switchport mode trunk phone)" in msg


def test_allowed_vlan_list_with_a_space_is_unparsed_never_all_silently(monkeypatch, tmp_path):
    model = parse_model("eos", (CORPUS / EOS_PHONES).read_text())
    p = model.port("Ethernet47")
    assert p.unparsed == ("switchport trunk allowed vlan 3, 4 (a space inside the VLAN list, which the device does "
                          "not take: 3,4)",)
    assert {3, 4} <= set(model.vlans)                   # still never taken as HARMLESS VIDs
    res = plan(monkeypatch, tmp_path, EOS_PHONES, [{"interface": "Ethernet4", "ofport": 1}], "Ethernet5",
               vlan_range="2-20")
    assert vids(res) == {"Ethernet4": 2}                # 3 (= 2 + ofport) is named by the unreadable line
    ios = parse_model("ios", "vtp mode transparent\ninterface GigabitEthernet0/1\n switchport mode trunk\n"
                      " switchport trunk allowed vlan 10,20\n switchport trunk allowed vlan add 30, 40\n"
                      " switchport trunk allowed vlan 5000\n").port("GigabitEthernet0/1")
    assert ios.allowed_vids == (10, 20)                 # the readable line, not "all" and no crash on 5000
    assert [u.split(" (")[0] for u in ios.unparsed] == ["switchport trunk allowed vlan add 30, 40",
                                                        "switchport trunk allowed vlan 5000"]


# ----------------------------------------------------------------------------- the management SVI / VLAN
@pytest.mark.parametrize("cfg, host, svi, port, trunk, vid", [
    (EOS_PHONES, "10.99.0.48", "Vlan99", "Ethernet6", "Ethernet5", 99),
    (C6509, "10.99.0.2", "Vlan99", "GigabitEthernet1/7", "GigabitEthernet1/9", 99),
    ("junos/ex4300_vc_cli_capture.cfg", "10.40.0.21", None, "ge-0/0/33", "ge-0/0/40", 40),
    ("procurve/5406r_interconnect_modules.cfg", "10.40.0.62", None, "B24", "C8", 40),
])
def test_the_vlan_of_the_management_address_is_management(monkeypatch, tmp_path, cfg, host, svi, port, trunk, vid):
    msg = refusal(monkeypatch, tmp_path, cfg, [port], trunk, host=host)
    assert f"sw1 {port} is an access port of VLAN {vid}, the switch's management VLAN" in msg and host in msg
    drv = offline.offline_driver(inventory(cfg.split("/")[0], [port], trunk, host=host).switches[0], "inv.yaml")
    facts = drv.load_saved((CORPUS / cfg).read_text())
    if svi:
        assert facts.port_model.port(svi).management
    assert vid in facts.vlans or vid in facts.port_model.vlans   # its VLAN is in use: never a HARMLESS VID
    # managed at another address (the out-of-band port), the same port is an ordinary access port
    plan(monkeypatch, tmp_path, cfg, [port], trunk, host="192.0.2.99")


# ----------------------------------------------------------------------------- Junos and ProCurve offline
def test_junos_show_configuration_capture_plans_offline(monkeypatch, tmp_path):
    cfg = "junos/ex4300_vc_cli_capture.cfg"
    model = parse_model("junos", (CORPUS / cfg).read_text())
    assert len(model.ports) == 58 and not model.unparsed          # prompt, {master:0} lines skipped, all read
    res = plan(monkeypatch, tmp_path, cfg, ["ge-0/0/31", "ge-0/0/32"], "ge-0/0/40")
    assert vids(res) == {"ge-0/0/31": 131, "ge-0/0/32": 132}
    assert res.facts["sw1"].hostname == "ex4300-vc-b1"
    diff = res.diffs["sw1"]
    assert "+set vlans harmless-sw1-p31 vlan-id 131\n" in diff
    assert "-set interfaces ge-0/0/31 unit 0 family ethernet-switching vlan members LAB\n" in diff
    assert "+set interfaces ge-0/0/40 unit 0 family ethernet-switching interface-mode trunk\n" in diff
    assert "-set interfaces ge-0/0/40 unit 0 family ethernet-switching\n" not in diff   # filled, not removed
    assert [ln for ln in diff.splitlines() if ln.startswith("-")] == [
        f"-set interfaces ge-0/0/3{n} unit 0 family ethernet-switching vlan members LAB" for n in (1, 2)]
    for port, words in (("ge-0/0/0", "has a voice VLAN (11)"), ("ge-0/0/46", "is a routed port"),
                        ("xe-0/2/0", "is a member of ae0"), ("ae0", "is a link aggregation group")):
        assert f"sw1 {port} {words}" in refusal(monkeypatch, tmp_path, cfg, [{"interface": port, "ofport": 1}],
                                                "ge-0/0/40")


def test_procurve_chassis_with_interconnect_ports_plans_offline(monkeypatch, tmp_path):
    cfg = "procurve/5406r_interconnect_modules.cfg"
    model = parse_model("procurve", (CORPUS / cfg).read_text())
    c1i = model.port("C1i")
    assert (c1i.mode, c1i.native_vid, c1i.allowed_vids) == ("trunk", 60, (10, 30, 40)) and not model.unparsed
    res = plan(monkeypatch, tmp_path, cfg, ["A20", "B13"], "C8")
    assert vids(res) == {"A20": 120, "B13": 213}
    assert res.diffs["sw1"] == ('+vlan 120\n+   name "harmless-sw1-p20"\n+   untagged A20\n+   tagged C8\n'
                                '+vlan 213\n+   name "harmless-sw1-p113"\n+   untagged B13\n+   tagged C8')
    assert res.facts["sw1"].hostname == "core-5406R-B2"
    for port, words in (("A1", "has a voice VLAN (11)"), ("B2", "has 802.1X/MAB"), ("F1", "is a member of Trk1"),
                        ("Trk1", "is a link aggregation group")):
        assert f"sw1 {port} {words}" in refusal(monkeypatch, tmp_path, cfg, [port], "C8")


@pytest.mark.parametrize("cfg, port, trunk, line", [
    ("procurve/5406zl_hand_typed_range.cfg", "C2", "C3", "line 20: vlan 30: tagged A1,B1-16 (bad ProCurve port "
                                                         "range 'B1-16')"),
    ("junos/ex3400_cut_capture.cfg", "ge-0/0/1", "ge-0/0/3", "line 19: statement 'description pasted by hand, "
                                                             "semicolon lost' lacks ';'"),
])
def test_a_config_with_a_bad_section_is_read_and_its_plan_refused_naming_the_line(monkeypatch, tmp_path, cfg, port,
                                                                                  trunk, line):
    model = parse_model(cfg.split("/")[0], (CORPUS / cfg).read_text())
    assert model.ports and line in model.unparsed[0]
    msg = refusal(monkeypatch, tmp_path, cfg, [port], trunk)
    assert msg.startswith("inv.yaml: switches[0]: sw1's configuration has lines HARMLESS cannot read") and line in msg


def test_a_config_of_another_os_is_refused_naming_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    inv = inventory("junos", ["ge-0/0/1"], "ge-0/0/2")
    with pytest.raises(InputError, match="ios/c2960_access_transparent.cfg: cannot parse the saved config"):
        offline.plan_offline(inv, "inv.yaml", {"sw1": CORPUS / "ios/c2960_access_transparent.cfg"})


# ----------------------------------------------------------------------------- the sweep over the whole corpus
#: a refusal names the port, then what it is (``sw1 ge-0/0/7 is a trunk``, ``'Vlan10' is a logical ...``)
def _names_port(msg: str, port: str) -> bool:
    return re.search(re.escape(port) + r"'? (is|has) ", msg) is not None


def _plain(p: PortInfo, driver: str, model: SwitchModel) -> bool:
    """A port HARMLESS may migrate: a plain layer-2 access port carrying nothing but its access VLAN."""
    return (p.mode in ("access", "dynamic") and not (p.lag or p.is_lag or p.mlag_peer_link or p.management)
            and p.voice_vid is None and not p.dot1x and not p.port_security
            and names.interface_problem(driver, p.interface) is None)


def _trunk_for(model: SwitchModel, driver: str, port: str) -> str | None:
    """A port that can be the HARMLESS trunk in this config (not ``port``), None when the config has none."""
    return next((p.interface for p in model.ports if p.interface != port and p.mode in ("access", "dynamic", "trunk")
                 and not (p.lag or p.mlag_peer_link or p.management)
                 and names.interface_problem(driver, p.interface) is None), None)


def _plan_one(sw_inv, facts, caps):
    return make_plan(sw_inv, {"sw1": facts}, None, "inv.yaml", {"sw1": caps})


@pytest.mark.parametrize("cfg", CONFIGS, ids=[f"{c.parent.name}/{c.stem}" for c in CONFIGS])
def test_every_unsafe_port_is_refused_naming_it_and_every_plain_one_planned(cfg):
    driver, text = cfg.parent.name, cfg.read_text()
    probe = offline.offline_driver(_any_switch(driver), "inv.yaml")
    facts = probe.load_saved(text)
    model, caps = facts.port_model, probe.saved_capabilities()
    switch_level = model.vtp_mode == "client" or bool(model.unparsed)
    planned, refused = [], 0
    for p in model.ports:
        trunk = _trunk_for(model, driver, p.interface)
        if trunk is None:
            continue
        try:
            # the trunk is not under test here: shared, so one that carries other VLANs is not refused for that
            res = _plan_one(inventory(driver, [{"interface": p.interface, "ofport": 1}], trunk, vtp="allow",
                                      shared=True), facts, caps)
        except InputError as e:
            msg = str(e)
            if switch_level:
                assert "VTP client" in msg or "cannot read" in msg, msg
            else:
                assert not _plain(p, driver, model), f"{p.interface} is a plain access port, yet: {msg}"
                assert _names_port(msg, p.interface), f"the refusal does not name {p.interface}: {msg}"
            refused += 1
            continue
        assert not switch_level and _plain(p, driver, model), f"{cfg.name}: {p.interface} ({p.mode}) was planned"
        vid = res.switches[0].ports[0].vid
        assert vid not in model.vlans and vid not in facts.vlans, (p.interface, vid)
        planned.append((p.interface, trunk))
    if planned:       # all plain ports in one plan, rendered and diffed (the render is the slow part: once)
        trunk = planned[0][1]
        ports = [{"interface": i, "ofport": n} for n, (i, _t) in enumerate(planned, 1) if i != trunk]
        sp = _plan_one(inventory(driver, ports, trunk, vtp="allow", shared=True), facts, caps).switches[0]
        assert not {p.vid for p in sp.ports} & set(model.vlans)
        candidate = probe.render(sp.access_changes(), sp.trunk_changes())
        assert offline._diff(probe, text, candidate)
    routers = ("isr2911_router", "isr4331_router", "mx204_router")
    assert planned or refused or cfg.stem in routers, f"{cfg.name}: no port could be tried"


def _any_switch(driver: str):
    """An inventory switch of ``driver`` (its names do not matter: the sweep builds one per port)."""
    port = {"ios": "GigabitEthernet0/1", "eos": "Ethernet1", "junos": "ge-0/0/1", "procurve": "1"}[driver]
    trunk = {"ios": "GigabitEthernet0/2", "eos": "Ethernet2", "junos": "ge-0/0/2", "procurve": "2"}[driver]
    return inventory(driver, [port], trunk).switches[0]
