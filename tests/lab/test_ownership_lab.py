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
