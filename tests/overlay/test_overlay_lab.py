"""The edge overlay on a real lab (one per module): 3 servers (own namespace + ovs-vswitchd each), a legacy L2 core
(OVS NORMAL), 7 VMs of 2 tenants with overlapping IPs, the os-ken app. Packet fate by ``ofproto/trace``, isolation
by capture, proxy-ARP (nothing reaches the core), host-based VIDs, migration by port-status, audit after a controller
restart."""
from __future__ import annotations

import json
import re
import select
import subprocess
import time

import pytest
from click.testing import CliRunner

from harmless.lab import netns
from harmless.overlay import lab as L
from harmless.overlay import measure as M
from harmless.pipelines.edge_overlay import flows as fl
from tests.conftest import require_root_ovs, stays, tcpdump, wait_for
from tests.overlay.conftest import overlay_lab

pytestmark = [pytest.mark.root, pytest.mark.ovs]


@pytest.fixture(scope="module")
def ov(tmp_path_factory):
    """The lab (name ``o`` + 3 hex digits) in a private HARMLESS_STATE_DIR; removed afterwards, also on failure."""
    require_root_ovs()
    for tool in ("tcpdump", "ping"):
        if not subprocess.run(["which", tool], capture_output=True).stdout:
            pytest.skip(f"needs {tool} (packaging/install.sh installs it)")
    yield from overlay_lab(tmp_path_factory, "overlay.yaml", "o")


def trace(lab: str, server: str, flow: str) -> tuple[list[int], str]:
    """``ofproto/trace`` on a server's edge switch: (OpenFlow output ports, the "Final flow" line)."""
    out = L.server_ovs(lab, server).appctl("ofproto/trace", L.BRIDGE, flow)
    ports = [int(p) for p in re.findall(r"^\s+output:(\d+)$", out, re.M)]
    final = next((ln for ln in out.splitlines() if ln.startswith("Final flow:")), "")
    return ports, final


def vm(lab, name):
    return L.registry(lab).vm(name)[1]


def test_packet_fate_fig6_and_fig5(ov):
    st = L.status(ov)
    r1, r2 = vm(ov, "r1"), vm(ov, "r2")
    smac = {s: x["mac"] for s, x in st["servers"].items()}
    vid = st["vids"]["s2"]["r2"]
    ports, final = trace(ov, "s1", f"in_port={r1.port},dl_src={r1.mac},dl_dst={r2.mac},dl_type=0x0800,"
                                    f"nw_src={r1.address},nw_dst={r2.address},nw_proto=1")
    assert ports == [1]
    assert f"dl_vlan={vid}," in final and f"dl_src={smac['s1']}" in final and f"dl_dst={smac['s2']}" in final
    ports, final = trace(ov, "s2", f"in_port=1,dl_vlan={vid},dl_src={smac['s1']},dl_dst={smac['s2']},"
                                   f"dl_type=0x0800,nw_src={r1.address},nw_dst={r2.address},nw_proto=1")
    assert ports == [r2.port]
    assert "vlan_tci=0x0000" in final and f"dl_src={r1.mac}" in final and f"dl_dst={r2.mac}" in final
    # the same frame flooded by the core to s3 (not addressed to s3's MAC) is dropped there
    assert trace(ov, "s3", f"in_port=1,dl_vlan={vid},dl_src={smac['s1']},dl_dst={smac['s2']},"
                           f"dl_type=0x0800,nw_src={r1.address}")[0] == []
    # across tenants: r1 -> b2's MAC has no flow
    b2 = vm(ov, "b2")
    assert trace(ov, "s1", f"in_port={r1.port},dl_src={r1.mac},dl_dst={b2.mac},dl_type=0x0800")[0] == []


def test_isolation_by_capture_and_all_pairs(ov):
    reg = L.registry(ov)
    vms = [v.name for _, v in reg.vms()]
    with M.Capture(ov, vms) as cap:
        loss, per = M.all_pairs_loss(ov, count=2)
        att = M.cross_tenant_attempts(ov)
    assert loss == 0.0, per
    assert att["sent"] > 0 and att["replies"] == 0
    frames = cap.frames()
    cross, foreign, ex = M.leaks(reg, frames)
    assert sum(len(r) for r in frames.values()) > 0
    assert cross == 0 and foreign == 0, ex
    fdb = M.legacy_fdb(ov)
    macs = {m for _, _, m in fdb}
    assert macs and not macs & {v.mac for _, v in reg.vms()}
    assert macs <= {x["mac"] for x in L.status(ov)["servers"].values()}


def test_proxy_arp_nothing_reaches_core(ov):
    r3 = vm(ov, "r3")
    n = L.ns(ov, "r1")
    before = L.status(ov)["arp"]
    cap = tcpdump(L.ns(ov, "core"), "-i", "s1", "-n", "-l", "-p", "-U",
                  "arp or ether dst ff:ff:ff:ff:ff:ff and not ether proto 0x88b5")
    try:
        netns.run_in(n, "ip", "neigh", "flush", "dev", "eth0", check=True)
        assert M.ping(ov, "r1", r3.address, count=2)[1] == 2
        assert M.ping(ov, "r1", "10.0.0.4", count=1, wait_s=1)[1] == 0        # blue-only IP
        # a frame still on its way to the core would be printed within this window (-U: written per packet)
        stays(lambda: not select.select([cap.stdout], [], [], 0)[0], 0.3, "no ARP or broadcast at the core")
    finally:
        cap.send_signal(2)
        core_frames = cap.communicate(timeout=10)[0]
    neigh = netns.run_in(n, "ip", "neigh", "show", r3.address, check=True).stdout
    assert r3.mac in neigh                                          # the real VM MAC (migration transparency)
    after = L.status(ov)["arp"]
    assert after["answered"] > before["answered"]
    assert after["reasons"].get("target not in tenant", 0) > before["reasons"].get("target not in tenant", 0)
    assert core_frames.strip() == ""                                # no ARP or broadcast crossed the core


def test_vids_host_based_and_in_flows(ov):
    st = L.status(ov)
    vids = st["vids"]
    assert vids == json.loads((L.lab_dir(ov) / "vids.json").read_text())
    for s, m in vids.items():
        assert len(set(m.values())) == len(m) and all(2 <= v <= 4094 for v in m.values())
        assert set(m) == {v for v, loc in st["where"].items() if loc[0] == s}
    fdb = {(vlan, mac) for _, vlan, mac in M.legacy_fdb(ov)}
    for s, m in vids.items():      # FDB priming: the core learnt each server's MAC in each VID it owns
        assert {(v, st["servers"][s]["mac"]) for v in m.values()} <= fdb
    values = [set(m.values()) for m in vids.values()]
    assert set.intersection(*values), "host-based: the same VID is used on several servers"
    for s, m in vids.items():
        dump = L.server_ovs(ov, s).ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE, "in_port=1")
        assert {int(x) for x in re.findall(r"dl_vlan=(\d+)", dump)} == set(m.values())


def test_migration_by_port_status(ov):
    r3_before = vm(ov, "r3")
    mig = M.migrate_while_pinging(ov, "r3", "s1", "r2", duration=3.0)
    assert mig["ok"], mig
    assert mig["received"] > 0
    st = L.status(ov)
    assert st["where"]["r3"][0] == "s1" and "r3" not in st["vids"].get("s3", {})
    assert any(m["vm"] == "r3" and m["from"] == "s3" and m["to"] == "s1" for m in st["migrations"])
    # no flow on the old server mentions r3 any more
    assert r3_before.mac not in L.server_ovs(ov, "s3").ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE)
    r = CliRunner().invoke(__import__("harmless.cli", fromlist=["main"]).main,
                           ["overlay", "status", "--name", ov, "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.output.strip().splitlines()[-1])
    assert s["vms"]["r3"]["at"][0] == "s1" and s["vms"]["r3"]["registry_server"] == "s1"


def converged_ping(ov: str, vm: str, ip: str, within_s: float = 20) -> bool:
    """True once two pings from ``vm`` to ``ip`` both come back (tried until ``within_s`` seconds have passed)."""
    try:
        return wait_for(lambda: M.ping(ov, vm, ip, count=2, wait_s=3)[1] == 2, within_s, f"{vm} -> {ip}", 0.5)
    except AssertionError:
        return False


def test_vm_add_remove_cli(ov):
    from harmless.cli import main
    run = CliRunner()
    r = run.invoke(main, ["overlay", "vm", "add", "r4", "--tenant", "red", "--mac", "52:54:00:11:00:04",
                          "--ip", "10.0.0.4/24", "--server", "s3", "--name", ov, "--json"])
    assert r.exit_code == 0, r.output
    wait_for(lambda: "r4" in L.status(ov).get("vids", {}).get("s3", {}), 30, "r4's VID on s3")
    # the controller installs r4's flows on every red server after the VID shows: converge, then both answer
    assert converged_ping(ov, "r1", "10.0.0.4")                      # red now has 10.0.0.4 too ...
    assert M.ping(ov, "b1", "10.0.0.4", count=2, wait_s=3)[1] == 2  # ... and blue's b4 still answers blue
    neigh = netns.run_in(L.ns(ov, "r1"), "ip", "neigh", "show", "10.0.0.4").stdout
    assert "52:54:00:11:00:04" in neigh
    bad = run.invoke(main, ["overlay", "vm", "add", "r5", "--tenant", "red", "--mac", "52:54:00:11:00:04",
                            "--ip", "10.0.0.5/24", "--server", "s3", "--name", ov])
    assert bad.exit_code == 2 and "mac" in bad.output
    r = run.invoke(main, ["overlay", "vm", "remove", "r4", "--name", ov, "--json"])
    assert r.exit_code == 0, r.output
    wait_for(lambda: "r4" not in L.status(ov).get("vids", {}).get("s3", {}), 30, "r4's VID on s3 released")
    assert "r4" not in L.status(ov)["vids"].get("s3", {}) and "r4" not in L.status(ov)["where"]
    assert "52:54:00:11:00:04" not in L.server_ovs(ov, "s1").ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE)


def test_restart_audit(ov):
    o = L.server_ovs(ov, "s2")
    vids_before = L.status(ov)["vids"]
    L.stop_controller(ov)
    flows = o.ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE)
    cookies = re.findall(r"cookie=(0x[0-9a-f]+)", flows)
    assert len(cookies) > 3
    victim = next(c for c in cookies if "priority=200" in flows.split(f"cookie={c}")[1].splitlines()[0])
    o.ofctl("-O", "OpenFlow13", "del-flows", L.BRIDGE, f"cookie={victim}/-1")
    stale = fl.COOKIE_BASE | 0xDEAD
    o.ofctl("-O", "OpenFlow13", "add-flow", L.BRIDGE, f"cookie={stale:#x},priority=250,in_port=1,actions=drop")
    # every flow present before the restart at least 1 s old: one the audit re-installed would show (duration < 1 s)
    wait_for(lambda: all(float(d) >= 1.0 for d in re.findall(r"duration=([\d.]+)s",
                                                             o.ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE))),
             10, "every flow on s2 at least 1 s old")
    t0 = time.time()
    L.start_controller(ov)
    st = L.wait_audited(ov, 60, since=t0)
    a = st["servers"]["s2"]["audit"]
    assert (a["added"], a["removed"], a["kept"]) == (1, 1, len(cookies) - 1)
    for s in ("s1", "s3"):          # whatever order the switches reconnect in, nothing valid is removed
        x = st["servers"][s]
        assert (x["audit"]["added"], x["audit"]["removed"], x["audit"]["kept"]) == (0, 0, x["flows"]), s
    after = o.ofctl("-O", "OpenFlow13", "dump-flows", L.BRIDGE)
    assert f"cookie={stale:#x}" not in after and f"cookie={victim}" in after
    kept = [ln for ln in after.splitlines() if "cookie=" in ln and f"cookie={victim}" not in ln]
    assert kept and all(float(re.search(r"duration=([\d.]+)s", ln).group(1)) >= 1.0 for ln in kept), \
        "present flows must be left alone (not re-installed)"
    assert st["vids"] == vids_before
    recs = [json.loads(ln) for ln in (L.lab_dir(ov) / "controller-journal.jsonl").read_text().splitlines()]
    assert any(r["step"] == "flows.apply" and r["server"] == "s2" and r["add"] == [victim]
               and r["delete"] == [f"{stale:#x}"] for r in recs), "the audit's changes are journaled first"
    assert {(r["server"], r["vm"]) for r in recs if r["step"] == "vid.allocate"} >= {
        (s, v) for s, m in vids_before.items() for v in m}
    assert M.ping(ov, "r1", vm(ov, "r2").address, count=2)[1] == 2
