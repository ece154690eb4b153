"""``harmless overlay ...``: the non-tunnelling edge overlay lab (Kawashima & Matsuo) (click group)."""
from __future__ import annotations

import json
import re

import click

from harmless.clikit import handle_errors, out, quiet_option
from harmless.clikit import need_root as _need_root
from harmless.clikit import progress as _progress
from harmless.errors import InputError
from harmless.lab.naming import pick_lab


def _lab_name(name: str | None) -> str:
    from harmless.overlay import lab
    return pick_lab(name, lab.running_labs() if not name else [], "overlay", "harmless overlay up -t <topology.yaml>",
                    known=lab.info)


def _emit(obj, as_json: bool, human) -> None:
    if as_json:
        click.echo(json.dumps(obj))
    else:
        human(obj)


_name_opt = click.option("--name", help="Lab name (default: the only overlay lab that is up).")
_json_opt = click.option("--json", "as_json", is_flag=True, help="Machine-readable output (last line one JSON object).")


@click.group("overlay")
def overlay():
    """Edge overlay without tunnels (Kawashima & Matsuo): isolated tenant L2 networks over a legacy L2 core.

    Every server's OVS edge switch (OpenFlow 1.3, os-ken controller) rewrites a VM's frame to the two servers' MACs
    and tags it with the VID that the *destination server* gave the destination VM (host-based VIDs, so tenants are
    not limited to 4094); the receiver restores both VM MACs and strips the tag. No encapsulation, no MTU loss; the
    core's MAC table holds only the servers' MACs. ARP is answered by the controller from the registry, only within
    the tenant. Migration follows the edge switches' port-status delete/add.

    Try: harmless overlay demo. Or: harmless overlay up -t examples/overlay.yaml; harmless overlay status;
    harmless overlay vm move r2 --to s3; harmless overlay down. Manual: docs/edge-overlay.md.
    """


@overlay.command("up")
@click.option("-t", "--topology", required=True, type=click.Path(dir_okay=False),
              help="Registry/topology file (YAML): servers, tenants, VMs with MAC/IP/server[/port].")
@click.option("--dry-run", is_flag=True, help="Validate the file and print the VM/port plan; change nothing.")
@_json_opt
@quiet_option()
@handle_errors
def up_cmd(topology, dry_run, as_json, quiet):
    """Build the lab: a legacy L2 core, one OVS edge switch per server (own namespace and ovs-vswitchd), the VMs
    (namespaces), the controller; wait until every edge switch is connected and audited."""
    from harmless.overlay import lab
    from harmless.pipelines.edge_overlay.model import load_registry
    reg = load_registry(topology)
    ports = reg.ports()
    plan = {"name": reg.name, "servers": reg.servers, "dry_run": dry_run,
            "vms": [{"name": v.name, "tenant": t, "mac": v.mac, "ip": v.ip, "server": v.server,
                     "port": ports[v.name]} for t, v in reg.vms()]}
    if not dry_run:
        _need_root()
        info = lab.up(topology, _progress(quiet or as_json))
        plan["status"] = lab.status(info["name"])

    def human(p):
        out.print(f"overlay lab [bold]{p['name']}[/]: {len(p['servers'])} servers, {len(p['vms'])} VMs"
                  + (" (dry run: nothing changed)" if dry_run else " up"))
        for v in p["vms"]:
            out.print(f"  {v['name']:7} {v['tenant']:7} {v['mac']} {v['ip']:18} {v['server']} port {v['port']}")
    _emit(plan, as_json, human)


@overlay.command("status")
@_name_opt
@_json_opt
@handle_errors
def status_cmd(name, as_json):
    """Servers (connected, flows, last audit), VMs (tenant, where, VID), ARP counters, migrations, the core's MACs."""
    from harmless.overlay import lab
    from harmless.overlay import measure
    _need_root()
    n = _lab_name(name)
    info, st, reg = lab.info(n), lab.status(n), lab.registry(n)
    fdb = measure.legacy_fdb(n)
    res = {"name": n, "mode": info["mode"], "servers": st.get("servers", {}),
           "vms": {v.name: {"tenant": t, "mac": v.mac, "ip": v.ip, "registry_server": v.server,
                            "at": st.get("where", {}).get(v.name),
                            "vid": (st.get("vids", {}).get((st.get("where", {}).get(v.name) or [None])[0], {})
                                    .get(v.name))} for t, v in reg.vms()},
           "arp": st.get("arp"), "migrations": st.get("migrations", []),
           "legacy_fdb": [{"port": p, "vlan": vl, "mac": m} for p, vl, m in fdb]}

    def human(r):
        out.print(f"overlay lab [bold]{r['name']}[/] (mode {r['mode']})")
        for s, x in r["servers"].items():
            a = x.get("audit") or {}
            out.print(f"  server {s}: {'connected' if x.get('connected') else '[red]not connected[/]'}, "
                      f"{x.get('flows')} flows, MAC {x.get('mac')}; last audit: {a.get('kept', '-')} kept, "
                      f"{a.get('added', '-')} added, {a.get('removed', '-')} removed")
        for v, x in r["vms"].items():
            at = f"{x['at'][0]} port {x['at'][1]}" if x["at"] else "[red]not on any edge switch[/]"
            out.print(f"  vm {v:7} {x['tenant']:7} {x['mac']} {x['ip']:18} at {at}, VID {x['vid']}")
        out.print(f"  ARP: {r['arp']}")
        out.print(f"  legacy core MAC table: {len({e['mac'] for e in r['legacy_fdb']})} MACs "
                  f"({len(r['legacy_fdb'])} entries)")
    _emit(res, as_json, human)


@overlay.group("vm")
def vm():
    """Add, move (migrate) or remove a VM of a running lab."""


@vm.command("add")
@click.argument("vm_name")
@click.option("--tenant", required=True, help="Tenant name (created if new).")
@click.option("--mac", required=True, help="VM MAC (unique in the registry), e.g. 52:54:00:11:00:09.")
@click.option("--ip", "ip", required=True, help="IPv4 address/prefix (unique within the tenant), e.g. 10.0.0.9/24.")
@click.option("--server", required=True, help="Server to start it on.")
@click.option("--port", type=int, default=None, help="OpenFlow port on the edge switch (default: lowest free).")
@_name_opt
@click.option("--dry-run", is_flag=True, help="Validate only.")
@_json_opt
@handle_errors
def vm_add(vm_name, tenant, mac, ip, server, port, name, dry_run, as_json):
    """Add a VM: registry entry (journaled), namespace, port on its server's edge switch (port-status ADD)."""
    from pydantic import ValidationError

    from harmless.overlay import lab
    from harmless.pipelines.edge_overlay.model import Vm
    _need_root()
    n = _lab_name(name)
    try:
        v = Vm(name=vm_name, mac=mac, ip=ip, server=server, port=port)
    except ValidationError as e:
        first = e.errors()[0]
        raise InputError(f"vm add: {first['loc'][0]}", first["msg"].removeprefix("Value error, "),
                         "see harmless overlay vm add --help") from None
    if server not in lab.registry(n).servers:
        raise InputError("--server", f"no server {server!r} in lab {n}", f"one of {', '.join(lab.registry(n).servers)}")
    if not dry_run:
        lab.vm_add(n, v, tenant)
    _emit({"vm": vm_name, "tenant": tenant, "server": server, "dry_run": dry_run}, as_json,
          lambda r: out.print(f"VM {vm_name} ({tenant}) {'would be' if dry_run else 'is'} on {server}"))


@vm.command("move")
@click.argument("vm_name")
@click.option("--to", "to", required=True, help="Destination server.")
@_name_opt
@click.option("--dry-run", is_flag=True, help="Validate only.")
@_json_opt
@handle_errors
def vm_move(vm_name, to, name, dry_run, as_json):
    """Migrate a VM: its port is deleted on the old edge switch and added on the new one; the controller follows
    the port-status messages (new VID on the destination, flows rewritten on every server)."""
    from harmless.overlay import lab
    _need_root()
    n = _lab_name(name)
    reg = lab.registry(n)
    if reg.vm(vm_name) is None:
        raise InputError("vm move", f"no VM {vm_name!r} in lab {n}", "harmless overlay status lists them")
    if to not in reg.servers:
        raise InputError("--to", f"no server {to!r} in lab {n}", f"one of {', '.join(reg.servers)}")
    r = {"vm": vm_name, "from": reg.vm(vm_name)[1].server, "to": to, "dry_run": dry_run}
    if not dry_run:
        r = lab.vm_move(n, vm_name, to) | {"vm": vm_name, "dry_run": False}
    _emit(r, as_json, lambda x: out.print(f"VM {vm_name}: {x['from']} -> {x['to']}"
                                          + (" (dry run)" if dry_run else "")))


@vm.command("remove")
@click.argument("vm_name")
@_name_opt
@click.option("--dry-run", is_flag=True, help="Validate only.")
@_json_opt
@handle_errors
def vm_remove(vm_name, name, dry_run, as_json):
    """Remove a VM (port-status DELETE: its flows disappear everywhere, its VID is freed)."""
    from harmless.overlay import lab
    _need_root()
    n = _lab_name(name)
    if lab.registry(n).vm(vm_name) is None:
        raise InputError("vm remove", f"no VM {vm_name!r} in lab {n}", "harmless overlay status lists them")
    if not dry_run:
        lab.vm_remove(n, vm_name)
    _emit({"vm": vm_name, "removed": not dry_run}, as_json, lambda r: out.print(f"VM {vm_name} removed"
                                                                                  + (" (dry run)" if dry_run else "")))


@overlay.command("mode")
@click.argument("mode", type=click.Choice(["overlay", "vxlan", "optimal"]))
@_name_opt
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@_json_opt
@handle_errors
def mode_cmd(mode, name, dry_run, as_json):
    """Switch the lab's data plane: overlay (the controller), vxlan (OVS userspace tunnels, one VNI per tenant) or
    optimal (no overlay, plain bridging; no tenant isolation) -- the paper's Table II comparison."""
    from harmless.overlay import lab
    _need_root()
    n = _lab_name(name)
    was = lab.info(n)["mode"]
    if not dry_run:
        lab.set_mode(n, mode)
    _emit({"name": n, "mode": mode, "was": was, "dry_run": dry_run}, as_json,
          lambda r: out.print(f"lab {n}: mode {was} -> {mode}" + (" (dry run: nothing changed)" if dry_run else "")))


@overlay.command("down")
@_name_opt
@click.option("--dry-run", is_flag=True, help="List the namespaces that would be removed; change nothing.")
@_json_opt
@handle_errors
def down_cmd(name, dry_run, as_json):
    """Remove the lab: controller, every OVS, namespaces, files (idempotent, also after a failed up)."""
    from pathlib import Path

    from harmless.overlay import lab
    _need_root()
    if name and not re.match(r"^[a-z][a-z0-9]{0,3}$", name):
        raise InputError("--name", f"{name!r} is not a lab name", "1-4 lowercase letters/digits")
    n = name or _lab_name(None)
    netns = sorted(p.name for p in Path("/run/netns").glob(f"hv{n}-*")) if Path("/run/netns").exists() else []
    found = bool(netns) or lab.info(n) is not None
    if not dry_run:
        found = lab.down(n)
    _emit({"name": n, "removed": found and not dry_run, "namespaces": netns, "dry_run": dry_run}, as_json,
          lambda r: out.print(f"overlay lab {n}: " + (f"would remove {len(netns)} namespaces: {' '.join(netns)}"
                                                      if dry_run else ("removed" if found else "nothing found"))))


@overlay.command("demo")
@click.option("-t", "--topology", type=click.Path(dir_okay=False, exists=True),
              help="Topology file (default: examples/overlay.yaml under a fresh lab name).")
@click.option("--iperf-seconds", default=3.0, show_default=True, help="Duration of each iperf3 TCP run.")
@click.option("--keep", is_flag=True, help="Leave the lab up afterwards (in optimal mode).")
@_json_opt
@quiet_option()
@handle_errors
def demo_cmd(topology, iperf_seconds, keep, as_json, quiet):
    """Build the lab, prove isolation (captures in every VM), MTU 1500 across the core, a clean core MAC table,
    migration under a 50 ms ping, then iperf3 TCP for overlay / VXLAN / optimal in the same run; remove it all.

    --json prints one JSON object last: servers, vms, tenants, intra_tenant_ping_loss_pct, cross_tenant_leaks,
    legacy_fdb_macs, vm_macs_in_legacy_fdb, mtu1500_overlay_loss_pct, mtu1500_vxlan_loss_pct, migration_ok,
    migration_lost_pings, tcp_gbps, cpu_per_gbit (CPU-seconds per Gbit), and details.
    """
    from harmless.overlay import demo
    _need_root()
    r = demo.run(topology, _progress(quiet or as_json), iperf_s=iperf_seconds, keep=keep)

    def human(x):
        out.print(f"servers {x['servers']}, VMs {x['vms']}, tenants {x['tenants']}")
        for k in ("intra_tenant_ping_loss_pct", "cross_tenant_leaks", "legacy_fdb_macs", "vm_macs_in_legacy_fdb",
                  "mtu1500_overlay_loss_pct", "mtu1500_vxlan_loss_pct", "migration_ok", "migration_lost_pings",
                  "tcp_gbps", "cpu_per_gbit"):
            out.print(f"  {k}: {x[k]}")
    _emit(r, as_json, human)
