"""``harmless overlay demo``: the edge-overlay lab end to end, the VXLAN and "optimal" comparison, then cleanup.

up (3 servers, 2 tenants with the same IPs, 7 VMs, legacy L2 core, controller) → pings between every VM pair of each
tenant while tcpdump runs in every VM → cross-tenant attempts (other tenants' IPs; static ARP entries naming another
tenant's VM) → captures checked for frames from other tenants → 1500-byte IP packets (``ping -M do -s 1472``) across
the core → the core's MAC table → a VM migrated while pinged every 50 ms → iperf3 TCP (overlay) → VXLAN mode: 1500-
byte packets, iperf3 at VM MTU 1500 (``tcp_gbps_vxlan_vm_mtu1500``), then with the VMs' MTU lowered to 1450 (the
usual VXLAN work-around; ``tcp_gbps.vxlan``) →
optimal mode: iperf3 → down. Everything is removed afterwards, also on failure or Ctrl-C.

The summary's keys: ``servers``, ``vms``, ``tenants``, ``intra_tenant_ping_loss_pct``, ``cross_tenant_leaks``
(frames captured in a VM whose source MAC is another tenant's VM, plus replies from another tenant's VM),
``legacy_fdb_macs`` (distinct MACs in the core's table after the overlay traffic, before the optimal run, which by
design puts VM MACs there), ``vm_macs_in_legacy_fdb``, ``mtu1500_overlay_loss_pct``, ``mtu1500_vxlan_loss_pct``,
``migration_ok``, ``migration_lost_pings``, ``tcp_gbps`` and ``cpu_per_gbit`` (``{"optimal", "overlay", "vxlan"}``,
Gbit/s and CPU-seconds per Gbit: all ovs-vswitchd of the lab + both iperf3 processes), plus details.
"""
from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

import yaml

from harmless.lab import netns
from harmless.overlay import lab as L
from harmless.overlay import measure as M

DEFAULT_TOPOLOGY = Path(__file__).resolve().parents[2] / "examples" / "overlay.yaml"


def run(topology: str | None = None, progress=lambda m: None, iperf_s: float = 3.0, keep: bool = False) -> dict:
    """Run the demo on ``topology`` (default: examples/overlay.yaml, under a fresh lab name); return the summary.

    ``keep`` leaves the lab up (in optimal mode) for exploring; ``harmless overlay down`` removes it.
    """
    src = Path(topology) if topology else DEFAULT_TOPOLOGY
    data = yaml.safe_load(src.read_text())
    if not topology:
        data["name"] = "d" + uuid.uuid4().hex[:3]
    fd, tmpname = tempfile.mkstemp(prefix="overlay-demo-", suffix=".yaml")
    os.close(fd)
    topo = Path(tmpname)
    topo.write_text(yaml.safe_dump(data, sort_keys=False))
    t0 = time.monotonic()
    progress(f"lab {data['name']}: up")
    info = L.up(str(topo), progress)
    name = info["name"]
    try:
        return _run(name, progress, iperf_s) | {"seconds": round(time.monotonic() - t0, 1)}
    finally:
        if not keep:
            progress("down")
            L.down(name)
        topo.unlink(missing_ok=True)


def _pick(reg):
    """(client, server) of one tenant on two different servers, a third server, and a VM to migrate."""
    for t in reg.tenants:
        for a in t.vms:
            for b in t.vms:
                if a.server != b.server:
                    third = next((s for s in reg.servers if s not in (a.server, b.server)), None)
                    return a.name, b.name, third
    raise ValueError("the topology needs one tenant with VMs on two servers")


def _run(name: str, progress, iperf_s: float) -> dict:
    reg = L.registry(name)
    vms = [v.name for _, v in reg.vms()]
    client, server, third = _pick(reg)
    res: dict = {"lab": name, "servers": len(reg.servers), "vms": len(vms), "tenants": len(reg.tenants)}
    res.update(_isolation(name, reg, vms, progress))
    ip = reg.vm(server)[1].address
    progress("1500-byte IP packets across the core (overlay)")
    res["mtu1500_overlay_loss_pct"] = _mtu1500_loss(name, client, ip)
    res.update(_core_fdb(name, reg))
    res.update(_migration(name, client, server, third, progress))
    detail = {}
    progress(f"iperf3 TCP {client} -> {server}, {iperf_s:.0f} s (overlay)")
    detail["overlay"] = M.iperf(name, client, server, iperf_s)
    res["mtu1500_vxlan_loss_pct"] = _vxlan(name, client, server, ip, iperf_s, detail, progress)
    progress("optimal mode (no overlay: NORMAL bridging onto the core)")
    L.set_mode(name, "optimal")
    for a, b in ((client, server), (server, client)):           # the tenants' IPs overlap: pin the pair's ARP
        vb = reg.vm(b)[1]
        netns.run_in(L.ns(name, a), "ip", "neigh", "replace", vb.address, "lladdr", vb.mac, "dev", "eth0",
                     "nud", "permanent")
    progress(f"iperf3 TCP (optimal), {iperf_s:.0f} s")
    detail["optimal"] = M.iperf(name, client, server, iperf_s)
    res["legacy_fdb_macs_after_optimal"] = len({m for _, _, m in M.legacy_fdb(name)})
    tcp = {k: v["gbps"] for k, v in detail.items()}
    cpu = {k: v["cpu_per_gbit"] for k, v in detail.items()}
    res["tcp_gbps_vxlan_vm_mtu1500"] = tcp["vxlan_vm_mtu1500"]
    res["tcp_gbps"] = {k: tcp[k] for k in ("optimal", "overlay", "vxlan")}
    res["cpu_per_gbit"] = {k: cpu[k] for k in ("optimal", "overlay", "vxlan")}
    res["tcp_detail"] = detail
    res["iperf_pair"] = [client, server]
    return res


def _isolation(name: str, reg, vms: list[str], progress) -> dict:
    """Pings between every VM pair of each tenant and cross-tenant attempts, with tcpdump in every VM: loss and
    leaks (frames or replies from other tenants)."""
    progress("pings between every VM pair of each tenant, tcpdump in every VM")
    with M.Capture(name, vms) as cap:
        loss, per_pair = M.all_pairs_loss(name, count=3)
        progress("cross-tenant attempts (other tenants' IPs, static ARP entries for other tenants' VMs)")
        attempts = M.cross_tenant_attempts(name)
    cross, foreign, examples = M.leaks(reg, cap.frames())
    return {"intra_tenant_ping_loss_pct": round(loss, 2), "intra_tenant_pairs": len(M.intra_tenant_pairs(reg)),
            "cross_tenant_leaks": cross + attempts["replies"],
            "cross_tenant_detail": {"captured_frames_from_other_tenants": cross, "replies_from_other_tenants":
                                    attempts["replies"], "attempt_pings_sent": attempts["sent"],
                                    "frames_with_non_vm_source_mac": foreign, "examples": examples,
                                    "frames_captured": sum(len(r) for r in cap.frames().values())}}


def _mtu1500_loss(name: str, client: str, ip: str) -> float:
    """Loss (%) of 20 pings with 1500-byte IP packets, don't fragment."""
    s, r = M.ping(name, client, ip, count=20, interval=0.05, size=1472, dont_fragment=True)
    return round(100.0 * (s - r) / s, 2)


def _core_fdb(name: str, reg) -> dict:
    """The legacy core's MAC table: distinct MACs, entries, and how many are VM MACs (should be none)."""
    fdb = M.legacy_fdb(name)
    macs = {m for _, _, m in fdb}
    return {"legacy_fdb_macs": len(macs), "legacy_fdb_entries": len(fdb),
            "vm_macs_in_legacy_fdb": len(macs & {v.mac for _, v in reg.vms()})}


def _migration(name: str, client: str, mig_vm: str, third: str, progress) -> dict:
    """Migrate ``mig_vm`` to ``third`` while ``client`` pings it every 50 ms; then the controller's VIDs, ARP
    counters and audits."""
    progress(f"migration: {mig_vm} -> {third} while {client} pings it every 50 ms")
    mig = M.migrate_while_pinging(name, mig_vm, third, client)
    st = L.status(name)
    return {"migration_ok": mig["ok"], "migration_lost_pings": mig["lost"], "migration": mig,
            "vids": st.get("vids"), "arp": st.get("arp"),
            "audits": {s: x.get("audit") for s, x in st.get("servers", {}).items()}}


def _vxlan(name: str, client: str, server: str, ip: str, iperf_s: float, detail: dict, progress) -> float:
    """VXLAN mode: 1500-byte packets (returns their loss, %), iperf3 with VM MTU 1500 and 1450 (into ``detail``)."""
    progress("VXLAN mode (OVS userspace tunnelling)")
    L.set_mode(name, "vxlan")
    M.ping(name, client, ip, count=2, interval=0.2)                # tunnel ARP warm-up
    loss = _mtu1500_loss(name, client, ip)
    progress(f"iperf3 TCP (vxlan, VM MTU 1500), {iperf_s:.0f} s: MSS-sized segments do not fit the tunnel")
    detail["vxlan_vm_mtu1500"] = M.iperf(name, client, server, iperf_s) | {"vm_mtu": 1500}
    M.set_mtu(name, [client, server], 1450)
    progress(f"iperf3 TCP (vxlan, VM MTU 1450), {iperf_s:.0f} s")
    detail["vxlan"] = M.iperf(name, client, server, iperf_s) | {"vm_mtu": 1450}
    M.set_mtu(name, [client, server], 1500)
    return loss
