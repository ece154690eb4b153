"""Two legacy switches of different vendors (Cisco IOS, Arista EOS) and three trunks on one server, the switches
cabled to each other.

sw1 has two trunks (Gi0/1 carries its port 7 and the inter-switch port 24, Gi0/2 carries port 8); sw2 has one.
Each switch gets its own br-of (own datapath id) under one controller. Hosts on every migrated port reach each other:
inside sw1 across its two trunks, and from sw1 to sw2 through br-of-sw1 port 24, the legacy cable, br-of-sw2 port 24.
"""
from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.procs import free_port
from harmless.lab import topology as lab
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
