"""Issue #22, item 2, as a property on the lab's emulated EOS switch (``HARMLESS_INCREMENTAL_VENDOR=ios``: the IOS
one): random sequences of inventory edits (ports added and removed, VIDs pinned and released, the trunk moved between
two cables, one of them an uplink HARMLESS shares), each followed by ``up``, end in the same device config and bridges as a fresh ``up`` of the last
inventory; after every ``up`` each port, VLAN and trunk the inventory does not ask for is exactly as in the original;
``down`` gives back the true original.

A seeded random loop (the hypothesis plugin is off in this suite, pyproject.toml): ``HARMLESS_INCREMENTAL_RUNS``
sequences (default 2 in CI) of ``HARMLESS_INCREMENTAL_STEPS`` edits (default 3), seeds from
``HARMLESS_INCREMENTAL_SEED`` (default 22) on; a failure names its seed and the inventories. A longer run::

    HARMLESS_INCREMENTAL_RUNS=25 .venv/bin/python -m pytest tests/lab/test_incremental_up.py
"""
from __future__ import annotations

import os
import random
import re

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab import topology as lab
from harmless.switch_drivers.ownership import syntax_for
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

VENDOR = os.environ.get("HARMLESS_INCREMENTAL_VENDOR", "eos")
RUNS = int(os.environ.get("HARMLESS_INCREMENTAL_RUNS", "2"))
STEPS = int(os.environ.get("HARMLESS_INCREMENTAL_STEPS", "3"))
SEED = int(os.environ.get("HARMLESS_INCREMENTAL_SEED", "22"))
#: ports the inventories draw from (7, 8, 10, 12 have hosts; 3 and 5 are empty ports)
PORTS = (3, 5, 7, 8, 10, 12)
#: VIDs an edit may pin (107 is port 7's default: pinning it on another port moves port 7)
PINS = (107, 130, 150, 151)
#: the second cable is an uplink already carrying VLANs 100-101: as HARMLESS's trunk it must be ``shared`` (HARMLESS
#: adds its VIDs to the allowed list, and must take them off again when they leave)
UPLINK = {"eos": "interface Ethernet26\n   switchport mode trunk\n   switchport trunk allowed vlan 100-101\n",
          "ios": "interface GigabitEthernet0/2\n switchport trunk allowed vlan 100,101\n switchport mode trunk\n"}


@pytest.fixture(scope="module")
def plab(tmp_path_factory):
    second = {"eos": "Ethernet26", "ios": "GigabitEthernet0/2"}[VENDOR]
    yield from make_lab(tmp_path_factory, hosts=(7, 8, 10, 12), vendor=VENDOR, more_trunks=(second,),
                        extra_config=UPLINK[VENDOR])


def inventory(plab, rng: random.Random) -> dict:
    """A random inventory: some ports, a few of them with a pinned VID, on one of the two trunks."""
    inv = yaml.safe_load(plab.inventory.read_text())
    ports = sorted(rng.sample(PORTS, rng.randint(1, len(PORTS))))
    pins = rng.sample(PINS, len(PINS))
    entries = []
    for n in ports:
        if pins and rng.random() < 0.3:
            entries.append({"interface": lab.access_iface(VENDOR, n), "vid": pins.pop()})
        else:
            entries.append(lab.access_iface(VENDOR, n))
    trunk = rng.choice(plab.info["trunks"])
    shared = trunk["switch_port"] != plab.info["trunk_port"]       # the uplink (see UPLINK); the free port never
    inv["switches"][0]["access_ports"] = entries
    inv["switches"][0]["trunks"] = [{"switch_port": trunk["switch_port"], "server_interface": trunk["interface"],
                                     "type": "system", **({"shared": True} if shared else {})}]
    return inv


def up(plab, inv: dict) -> None:
    p = plab.state_dir / "inventory-now.yaml"
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    orch.up(str(p), wait_controller=0)


def bridges() -> dict:
    """What HARMLESS built on the server: bridges, their ports, interfaces (ofport, type, options), br-otc's flows."""
    ovs = deployment.state_ovs(st.load())
    brs = sorted(ovs.vsctl("list-br").split())
    dump = ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc")
    flows = sorted(re.sub(r"\s+", " ", ln.strip()) for ln in dump.splitlines() if "actions=" in ln)
    ifaces = sorted((r["name"], r["ofport"], r["type"], str(r["options"]))
                    for r in ovs.vsctl_json("Interface", columns=["name", "ofport", "type", "options"]))
    return {"bridges": brs, "ports": {b: sorted(ovs.vsctl("list-ports", b).split()) for b in brs},
            "interfaces": ifaces, "br-otc flows": flows}


def check_only_asked_for(plab, original: str, inv: dict, where: str) -> None:
    """Every object the inventory does not ask for (other ports, the unused trunk, VLANs) is as in the original."""
    s = st.load()
    sp = s.plan["switches"][0]
    asked = {f"interface {p['interface'].lower()}" for p in sp["ports"]}
    asked |= {f"interface {t['switch_port'].lower()}" for t in sp["trunks"]} | {f"vlan {p['vid']}" for p in sp["ports"]}
    syntax = syntax_for(VENDOR)
    now, orig = syntax.units(plab.running_config()), syntax.units(original)
    stray = [k for k in set(now) | set(orig) if k not in asked and now.get(k) != orig.get(k)]
    assert not stray, f"{where}: {stray} differ from the original though the inventory does not ask for them"


def test_any_sequence_of_edits_ends_as_a_fresh_up_and_down_restores_the_original(plab):
    original = plab.running_config()
    for run in range(RUNS):
        seed = SEED + run
        rng = random.Random(seed)
        invs = [inventory(plab, rng) for _ in range(STEPS)]
        where = f"seed {seed}: " + " -> ".join(
            str([p if isinstance(p, str) else f"{p['interface']}@{p['vid']}" for p in i["switches"][0]["access_ports"]])
            + "/" + i["switches"][0]["trunks"][0]["switch_port"]
            + ("(shared)" if i["switches"][0]["trunks"][0].get("shared") else "") for i in invs)
        print(where)
        for k, inv in enumerate(invs):
            up(plab, inv)
            check_only_asked_for(plab, original, inv, f"{where} (after up {k + 1})")
        after_edits, built = plab.running_config(), bridges()
        orch.down()
        assert plab.running_config() == original, f"{where}: down did not give back the true original"
        up(plab, invs[-1])
        assert plab.running_config() == after_edits, f"{where}: the switch differs from a fresh up"
        assert bridges() == built, f"{where}: the bridges differ from a fresh up"
        orch.down()
        assert plab.running_config() == original, f"{where}: down after the fresh up"
        assert not [e for e in st.backup_index() if e["role"] == "original" and e["status"] == "active"]
