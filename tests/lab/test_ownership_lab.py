"""Issue #22 on the lab's emulated IOS and EOS switches: HARMLESS owns only what it wrote.

While migrated, an operator edits the switch (a new VLAN, a description on an unmigrated port, an unmigrated port's
mode, an ACL). ``down`` keeps every edit: the running config afterwards equals, byte for byte, what the same edits
give on the unmigrated switch. An edit to a migrated port's VLAN stops ``down`` (exit 5, nothing changed, the lines
shown); ``down --discard-changes`` then gives the exact original. One lab per vendor (module fixture, parametrized).
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harmless import orchestrator as orch
from harmless import state as st
from harmless.cli import main
from harmless.lab import topology as lab
from harmless.ownership import EXIT_CONFLICT, DriftConflict
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

#: the operator's edits while migrated, per vendor (lab hosts on ports 7, 8, 10, 12; 7, 8 and 10 are migrated)
EDITS = {
    "ios": ["vlan 555", "name ops",
            "interface FastEthernet0/12", "description printer room 2.14",
            "interface FastEthernet0/9", "switchport mode trunk",
            "ip access-list extended BLOCK-TELNET", "deny tcp any any eq 23", "permit ip any any"],
    "eos": ["vlan 555", "name ops",
            "interface Ethernet12", "description printer room 2.14",
            "interface Ethernet9", "switchport mode trunk",
            "ip access-list BLOCK-TELNET", "deny tcp any any eq 23", "permit ip any any"],
}
#: what the edits above are called in down's result (object labels)
KEPT = {"ios": {"vlan 555", "interface FastEthernet0/9", "interface FastEthernet0/12",
                "ip access-list extended BLOCK-TELNET"},
        "eos": {"vlan 555", "interface Ethernet9", "interface Ethernet12", "ip access-list BLOCK-TELNET"}}
#: an edit of a migrated port's VLAN (HARMLESS owns it)
OWNED_EDIT = {"ios": ["interface FastEthernet0/7", "switchport access vlan 555"],
              "eos": ["interface Ethernet7", "switchport access vlan 555"]}


@pytest.fixture(scope="module", params=["ios", "eos"])
def dlab(request, tmp_path_factory):
    yield from make_lab(tmp_path_factory, hosts=(7, 8, 10, 12), ports=(7, 8, 10), vendor=request.param)


def configure(lb, lines: list[str]) -> None:
    """The operator's change by hand (config mode over the device's own CLI / eAPI)."""
    drv = lb.driver()
    try:
        dev = drv._dev().device
        if lb.info["vendor"] == "ios":
            out = dev.send_config_set(lines)
            assert "Invalid input" not in out and "rejected" not in out, out
        else:
            dev.config(lines)
    finally:
        drv.close()


def replace(lb, text: str) -> None:
    drv = lb.driver()
    try:
        drv.restore(text)
        assert drv.running_config() == text
    finally:
        drv.close()


@pytest.fixture(scope="module")
def reference(dlab):
    """``(original, the original + the edits)``: the edits made on the unmigrated switch, then undone."""
    original = dlab.running_config()
    configure(dlab, EDITS[dlab.info["vendor"]])
    edited = dlab.running_config()
    replace(dlab, original)
    assert edited != original
    return original, edited


def test_down_keeps_the_operators_edits_byte_for_byte(dlab, reference):
    original, edited = reference
    vendor = dlab.info["vendor"]
    orch.up(str(dlab.inventory), wait_controller=0)
    migrated = dlab.running_config()
    configure(dlab, EDITS[vendor])
    assert dlab.running_config() != migrated

    r = CliRunner().invoke(main, ["down", "--dry-run", "--json"])
    assert r.exit_code == 0, r.stderr
    p = json.loads(r.stdout)
    sw = p["switches"]["sw1"]
    assert not p["blocked"] and sw["mode"] == "merge" and not sw["conflicts"] and not sw["equals_original"]
    assert {c["label"] for c in sw["kept"]} == KEPT[vendor]
    assert {"br-otc", "br-of-sw1"} <= set(p["bridges"])
    assert "target" not in sw and "+ " in sw["diff"]
    assert st.load() is not None and dlab.running_config() != original      # the dry run changed nothing

    res = orch.down()
    after = dlab.running_config()
    assert after == edited, "down lost or changed an operator's edit"
    assert res.restored == {"sw1": True} and res.ports_restored == {"sw1": []}
    assert set(res.kept["sw1"]) == KEPT[vendor]
    # the original stays the original in the index; the merged config that proves the device is recorded beside it
    idx = st.backup_index()
    orig = [e for e in idx if e["role"] == "original"][-1]
    assert orig["status"] == "restored" and st.read_backup(orig) == original
    merged = next(e for e in idx if e["file"] == orig["restored_with_changes"])
    assert merged["role"] == "merged" and res.proven_against["sw1"] == merged["file"]
    assert st.load() is None
    replace(dlab, original)


def test_an_edit_to_a_migrated_port_stops_down_until_discarded(dlab, reference):
    original, _edited = reference
    vendor = dlab.info["vendor"]
    orch.up(str(dlab.inventory), wait_controller=0)
    configure(dlab, EDITS[vendor] + OWNED_EDIT[vendor])
    before = dlab.running_config()

    r = CliRunner().invoke(main, ["down"])
    assert r.exit_code == EXIT_CONFLICT, (r.exit_code, r.stdout, r.stderr)
    port = lab.access_iface(vendor, 7)
    assert f"conflict interface {port}" in r.stdout and "switchport access vlan 555" in r.stdout
    err = r.stderr.strip().splitlines()[-1]
    assert err.startswith("error: harmless down: the operator changed what HARMLESS owns") and \
        "--discard-changes" in err
    assert dlab.running_config() == before and st.load() is not None    # nothing changed, still deployed
    assert not (dlab.state_dir / "journal.jsonl").exists()
    with pytest.raises(DriftConflict) as e:
        orch.down()
    assert [c.label for c in e.value.reverts[0].conflicts] == [f"interface {port}"]
    c = e.value.reverts[0].conflicts[0]
    assert any("vlan 100" in x for x in c.original) and any("vlan 555" in x for x in c.now)

    r = CliRunner().invoke(main, ["down", "--discard-changes", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["restored"] == {"sw1": True} and set(out["discarded"]["sw1"]) == KEPT[vendor]
    assert dlab.running_config() == original
    assert st.load() is None


def test_a_port_removed_from_the_inventory_gets_its_original_config_and_host_back(dlab, reference):
    """The issue's case: port 7 dropped from access_ports, up again → port 7 is back in VLAN 100 exactly as before
    (its host reaches the unmigrated host on port 12 through the legacy switch), the trunk no longer carries its
    VID, ports 8 and 10 still hairpin through HARMLESS. While port 7 was changed by hand, that up stops (exit 5)."""
    import yaml

    from harmless.switch_drivers.ownership import syntax_for
    from tests.conftest import wait_for

    original, _edited = reference
    vendor = dlab.info["vendor"]
    orch.up(str(dlab.inventory), wait_controller=10)
    text = dlab.inventory.read_text()
    inv = yaml.safe_load(text)
    inv["switches"][0]["access_ports"] = [lab.access_iface(vendor, n) for n in (8, 10)]
    dlab.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    port = lab.access_iface(vendor, 7)
    try:
        # port 7 changed by hand first: up would have to give it back, so it stops before any change
        configure(dlab, [f"interface {port}", "switchport access vlan 101"])
        before = dlab.running_config()
        r = CliRunner().invoke(main, ["up", "-i", str(dlab.inventory), "--no-wait"])
        assert r.exit_code == EXIT_CONFLICT, (r.exit_code, r.stdout, r.stderr)
        assert f"conflict interface {port}" in r.stdout and "harmless up" in r.stderr
        assert dlab.running_config() == before and not (dlab.state_dir / "journal.jsonl").exists()
        configure(dlab, [f"interface {port}", "switchport access vlan 107"])
        res = orch.up(str(dlab.inventory), wait_controller=10)
    finally:
        dlab.inventory.write_text(text)
    assert res.changed == {"sw1": True}
    syntax = syntax_for(vendor)
    now, orig = syntax.units(dlab.running_config()), syntax.units(original)
    port7 = f"interface {lab.access_iface(vendor, 7).lower()}"
    assert now[port7] == orig[port7] and "vlan 107" not in now
    trunk = now[f"interface {dlab.info['trunk_port'].lower()}"]
    assert any(x.strip() == "switchport trunk allowed vlan 108,110" for x in trunk), trunk
    owned = {o.key for o in st.load().owned["sw1"].objects}
    assert port7 not in owned and "vlan 107" not in owned
    lovs = dlab.lab_ovs()
    wait_for(lambda: lovs.vsctl("get", "Port", lab.ovs_port(lab.access_iface(vendor, 7)), "tag").strip() == "100",
             20, "port 7 back in VLAN 100 on the lab's data plane")
    wait_for(lambda: lab.ping(dlab.info, 7, 12, count=1) == 0.0, 20, "host 7 reaches host 12 directly")
    wait_for(lambda: lab.ping(dlab.info, 8, 10, count=1) == 0.0, 20, "hosts 8 and 10 through HARMLESS")
    orch.down()
    assert dlab.running_config() == original
