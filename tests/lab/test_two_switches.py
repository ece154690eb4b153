"""Two legacy switches of different vendors (Cisco IOS, Arista EOS) and three trunks on one server, the switches
cabled to each other.

sw1 has two trunks (Gi0/1 carries its port 7 and the inter-switch port 24, Gi0/2 carries port 8); sw2 has one.
Each switch gets its own br-of (own datapath id) under one controller. Hosts on every migrated port reach each other:
inside sw1 across its two trunks, and from sw1 to sw2 through br-of-sw1 port 24, the legacy cable, br-of-sw2 port 24.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml

from harmless import deployment, journal
from harmless import orchestrator as orch
from harmless import state as st
from harmless.inventory import load_inventory
from harmless.procs import free_port
from harmless.lab import topology as lab
from harmless.switch_drivers.ownership import syntax_for
from tests.lab.conftest import lab_vendor_b, make_labs


def _specs(prefix: str, srv: str) -> Iterator[lab.LabSpec]:
    na, nb = f"{prefix}a", f"{prefix}b"
    yield lab.LabSpec(name=na, ssh_port=free_port(), hosts=(7, 8), server_netns=srv,
                      more_trunks=("GigabitEthernet0/2",), uplinks=((24, ""),))
    yield lab.LabSpec(name=nb, ssh_port=free_port(), hosts=(7, 8), server_netns=srv, host_base=100,
                      uplinks=((24, lab.uplink_iface(na, 24)),), **lab_vendor_b())


def _switches(infos: list[dict]) -> list[dict]:
    a, b = infos
    s1 = lab.inventory(a, ["tcp:127.0.0.1:6653"])["switches"][0]
    s1.update(access_ports=["FastEthernet0/7", {"interface": "FastEthernet0/8", "trunk": "GigabitEthernet0/2"},
                            "FastEthernet0/24"])
    s2 = lab.inventory(b, ["tcp:127.0.0.1:6653"])["switches"][0]
    s2.update(name="sw2", datapath_id="0x0000000000000002",
              access_ports=[*s2["access_ports"], lab.access_iface(b["vendor"], 24)])
    return [s1, s2]


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    labs = make_labs(tmp_path_factory, "w", _specs, _switches, "two.yaml")
    for x in labs:
        a, b = x["infos"]
        yield {"inventory": x["inventory"], "a": a, "b": b}


def ping_ip(info, src, ip, count=3):
    import re
    p = subprocess.run(["ip", "netns", "exec", info["hosts"][str(src)]["netns"], "ping", "-c", str(count), "-i",
                        "0.2", "-W", "2", ip], capture_output=True, text=True)
    m = re.search(r"([\d.]+)% packet loss", p.stdout)
    return float(m.group(1)) if m else 100.0


def _up_one(inventory: str, name: str):
    """``harmless up --switch NAME``: the result and the switches the run read (its on_switch events)."""
    events = []
    r = orch.up(inventory, on_switch=lambda sw, ev: events.append(sw), only={name})
    return r, set(events)


def test_hosts_on_all_migrated_ports_of_two_switches_reach_each_other(two):
    # up --switch (docs/cli.md): one switch at a time; the other is neither read nor changed, and stays deployed
    r, read = _up_one(str(two["inventory"]), "sw2")
    assert read == {"sw2"} and set(r.results) == {"sw2"} and r.results["sw2"].status == "migrated"
    assert [sp["name"] for sp in r.plan["switches"]] == ["sw2"] and r.plan["switches"][0]["index"] == 2
    r, read = _up_one(str(two["inventory"]), "sw1")
    assert read == {"sw1"} and set(r.results) == {"sw1"} and r.results["sw1"].status == "migrated"
    assert [sp["name"] for sp in r.plan["switches"]] == ["sw1", "sw2"] and set(st.load().backups) == {"sw1", "sw2"}
    r = orch.up(str(two["inventory"]))                                 # the whole inventory: nothing left to do
    assert r.failed == [] and {n: x.status for n, x in r.results.items()} == {"sw1": "unchanged", "sw2": "unchanged"}
    plan = {sp["name"]: sp for sp in r.plan["switches"]}
    assert {p["interface"]: p["trunk"] for p in plan["sw1"]["ports"]} == {
        "FastEthernet0/7": "GigabitEthernet0/1", "FastEthernet0/8": "GigabitEthernet0/2",
        "FastEthernet0/24": "GigabitEthernet0/1"}
    ovs = deployment.state_ovs(st.load())
    dpids = {br: ovs.vsctl("get", "Bridge", br, "other_config:datapath-id").strip('"\n')
             for br in ("br-of-sw1", "br-of-sw2")}
    assert dpids == {"br-of-sw1": "0000000000000001", "br-of-sw2": "0000000000000002"}
    a, b = two["a"], two["b"]
    # inside sw1, across its two trunks
    assert ping_ip(a, 7, a["hosts"]["8"]["ip"]) == 0.0
    # sw1 -> sw2 over the legacy cable between their migrated ports 24, and inside sw2
    for src in (7, 8):
        for dst in (7, 8):
            assert ping_ip(a, src, b["hosts"][str(dst)]["ip"]) == 0.0, (src, dst)
    assert ping_ip(b, 7, b["hosts"]["8"]["ip"]) == 0.0
    # both trunks of sw1 carried traffic
    st_ = orch.status(with_device=False).switches
    trunks = {name: t["rx_packets"] for sw in st_ for name, t in sw.trunks.items()}
    assert all(n > 0 for n in trunks.values()) and len(trunks) == 3
    d = orch.down()
    assert d.config_restored and set(d.restored) == {"sw1", "sw2"}


def _sw2_config(inventory: str, lines: list[str] | None = None) -> str:
    """sw2's running config (sw2 of the inventory ``inventory``), after the operator's ``lines`` typed by hand (eAPI)
    when given."""
    sw2 = next(s for s in load_inventory(inventory).switches if s.name == "sw2")
    d = deployment.connect(sw2, "test")
    try:
        if lines:
            d._dev().device.config(lines)
        return d.running_config()
    finally:
        d.close()


def test_a_switch_removed_from_the_inventory_is_given_back_by_up(two):
    """Both switches migrated, then VLAN 555 added on sw2 by hand (not HARMLESS's) and sw2 removed from the inventory:
    plan says up gives it back; an up killed right after its device.revert record is undone by recover (sw2 migrated
    as before); the next up gives sw2 its original + VLAN 555 (journaled), removes br-of-sw2 and forgets sw2, and
    leaves sw1 migrated; down gives sw1 back."""
    inventory = str(two["inventory"])
    full = two["inventory"].read_text()
    both = two["inventory"].with_name("both.yaml")            # sw2's entry, to reach it after it left the inventory
    both.write_text(full)
    try:
        orch.up(inventory, wait_controller=0)
        kept_as = st.load().backups["sw2"].model_dump()
        original = st.read_backup(kept_as)
        migrated = _sw2_config(str(both), ["vlan 555", "name ops"])
        one = yaml.safe_load(full)
        one["switches"] = [x for x in one["switches"] if x["name"] != "sw2"]
        two["inventory"].write_text(yaml.safe_dump(one, sort_keys=False))
        said = [f for f in orch.plan(inventory).findings if f.kind == "switch-removed"]
        assert [f.switch for f in said] == ["sw2"] and "gives it back its original config" in said[0].problem
        killed = subprocess.run([sys.executable, "-m", "harmless.cli", "up", "-i", inventory, "--no-wait"],
                                env={**os.environ, "HARMLESS_FAULT_AT": "device.revert:KILL"}, capture_output=True,
                                text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert killed.returncode == -9, killed.stderr[-800:]
        rec = [r for r in journal.unfinished() if r.get("step") == "device.revert"][-1]
        assert rec["switch"] == "sw2" and rec["removed"] and rec["rollback_to"]["file"]
        assert orch.recover().recovered == "previous deployment" and _sw2_config(str(both)) == migrated
        r = orch.up(inventory, wait_controller=0)
        assert {n: x.status for n, x in r.results.items()} == {"sw1": "unchanged", "sw2": "given back"}
        blocks = syntax_for("eos")
        now, orig = blocks.units(_sw2_config(str(both))), blocks.units(original)
        assert "vlan 555" in now and {k: v for k, v in now.items() if k != "vlan 555"} == orig
        s = st.load()
        assert set(s.backups) == set(s.owned) == {"sw1"} and [sp["name"] for sp in s.plan["switches"]] == ["sw1"]
        assert "br-of-sw2" not in deployment.state_ovs(s).vsctl("list-br").split()
        entry = next(e for e in st.backup_index() if e["file"] == kept_as["file"])
        assert entry["status"] == "restored" and entry.get("restored_with_changes")
        assert ping_ip(two["a"], 7, two["a"]["hosts"]["8"]["ip"]) == 0.0          # sw1 still hairpins
        d = orch.down()
        assert d.config_restored and set(d.restored) == {"sw1"}
    finally:
        two["inventory"].write_text(full)
        if st.load():
            orch.down()
        _sw2_config(str(both), ["no vlan 555"])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harmless.cli", *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env=os.environ)


def test_down_switch_gives_back_one_switch_and_leaves_the_other_migrated(two):
    """``down --switch sw2`` (issue #25, docs/cli.md): --dry-run shows sw2 and br-of-sw2 only; then sw2 gets its
    original + the operator's VLAN 555, br-of-sw2 goes, the state forgets sw2, sw1 stays migrated and hairpins; the
    only switch left or an unknown name is refused (exit 2, nothing changed); down gives sw1 back."""
    inventory = str(two["inventory"])
    try:
        orch.up(inventory, wait_controller=0)
        original = st.read_backup(st.load().backups["sw2"].model_dump())
        _sw2_config(inventory, ["vlan 555", "name ops"])
        p = _cli("down", "--switch", "sw2", "--dry-run", "--json")
        assert p.returncode == 0, p.stderr[-800:]
        preview = __import__("json").loads(p.stdout)
        assert set(preview["switches"]) == {"sw2"} and preview["bridges"] == ["br-of-sw2"] and not preview["stop_ovs"]
        assert [c["label"] for c in preview["switches"]["sw2"]["kept"]] == ["vlan 555"]
        assert set(st.load().backups) == {"sw1", "sw2"}                       # --dry-run changed nothing
        p = _cli("down", "--switch", "sw2", "--json")
        assert p.returncode == 0, p.stderr[-800:]
        r = __import__("json").loads(p.stdout)
        assert r["restored"] == {"sw2": True} and r["server"] == ["br-of-sw2"] and r["kept"] == {"sw2": ["vlan 555"]}
        blocks = syntax_for("eos")
        now, orig = blocks.units(_sw2_config(inventory)), blocks.units(original)
        assert "vlan 555" in now and {k: v for k, v in now.items() if k != "vlan 555"} == orig
        s = st.load()
        assert set(s.backups) == {"sw1"} and [sp["name"] for sp in s.plan["switches"]] == ["sw1"]
        assert "br-of-sw2" not in deployment.state_ovs(s).vsctl("list-br").split()
        assert ping_ip(two["a"], 7, two["a"]["hosts"]["8"]["ip"]) == 0.0          # sw1 still hairpins
        for name, said in (("sw1", "only switch"), ("sw3", "did you mean")):
            p = _cli("down", "--switch", name)
            assert p.returncode == 2 and said in p.stderr.lower(), p.stderr[-800:]
        assert set(st.load().backups) == {"sw1"}
        d = orch.down()
        assert d.config_restored and set(d.restored) == {"sw1"}
    finally:
        if st.load():
            orch.down()
        _sw2_config(inventory, ["no vlan 555"])
