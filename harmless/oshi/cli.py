"""``harmless oshi ...``: the OSHI hybrid IP/SDN lab, its services and its benchmark (click group)."""
from __future__ import annotations

import json
import sys

import click

from harmless.clikit import err, handle_errors, json_option, out, quiet_option
from harmless.clikit import need_root as _need_root
from harmless.clikit import progress as _progress
from harmless.errors import InputError
from harmless.lab.naming import pick_lab


def _lab_name(name: str | None) -> str:
    from harmless.oshi import lab
    return pick_lab(name, lab.running_labs() if not name else [], "OSHI", "harmless oshi up -t <topology.yaml>")


def _client(name: str | None, api: str | None):
    from harmless.oshi import lab
    from harmless.pipelines.oshi.api import ApiClient
    return ApiClient(api) if api else lab.api_client(_lab_name(name))


def _emit(obj, as_json: bool, human) -> None:
    if as_json:
        click.echo(json.dumps(obj))
    else:
        human(obj)


@click.group("oshi")
def oshi():
    """OSHI: hybrid IP/SDN nodes (Salsano et al., IEEE TNSM 2015) on OVS and HARMLESS ports.

    Each node is an OpenFlow bridge + the Linux IP stack + FRR (OSPF). Best-effort IP is routed by OSPF; SDN Based
    Paths (IP VLL, Ethernet-over-MPLS pseudowires, virtual switches) are set up by the os-ken controller in table 1.

    Try: harmless oshi demo. Or: harmless oshi up -t examples/oshi-demo.yaml; harmless oshi service create ...;
    harmless oshi down.
    """


@oshi.command("up")
@click.option("-t", "--topology", required=True, type=click.Path(dir_okay=False), help="OSHI topology file (YAML).")
@click.option("--dry-run", is_flag=True, help="Validate the file and print the port/address plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (last line one JSON object).")
@quiet_option()
@handle_errors
def up_cmd(topology, dry_run, as_json, quiet):
    """Deploy a topology into namespaces (one OVS + one FRR per node), wait for OSPF and the controller."""
    from harmless.oshi import lab
    from harmless.oshi.topology import load_topology, make_plan
    t = load_topology(topology)
    if dry_run:
        plan = make_plan(t)
        obj = {"name": t.name, "nodes": {n.name: {"netns": n.netns, "dpid": f"{n.dpid:#018x}", "harmless": n.harmless,
                                                  "ports": [{"ofport": p.ofport, "name": p.name, "ip": p.ip,
                                                             "internal": p.internal} for p in n.ports]}
                                         for n in plan.nodes.values()},
               "ces": {c.name: {"node": c.node, "ip": c.ip, "service_ips": c.service_ips} for c in plan.ces.values()}}
        _emit(obj, as_json, lambda o: out.print_json(data=o))
        return
    _need_root()
    rec = lab.up(topology, _progress(quiet or as_json))
    obj = {k: rec[k] for k in ("name", "ospf_converged", "ospf_seconds", "controller_seconds", "api_socket")}
    _emit(obj, as_json, lambda o: out.print(f"OSHI lab {o['name']} up: OSPF converged={o['ospf_converged']} "
                                             f"in {o['ospf_seconds']:.1f} s; API {o['api_socket']}"))


@oshi.command("down")
@click.option("--name", help="Lab name (default: the only lab that is up).")
@quiet_option()
@json_option('{"name", "removed"} as one JSON object')
@handle_errors
def down_cmd(name, quiet, as_json):
    """Remove a lab: controller, FRR, OVS, the HARMLESS deployment (switch config restored), namespaces.
    Nothing of the lab left: says so, exit 0."""
    from harmless.oshi import lab
    _need_root()
    n = _lab_name(name)
    found = lab.down(n, _progress(quiet or as_json))
    _emit({"name": n, "removed": bool(found)}, as_json,
          lambda o: out.print(f"OSHI lab {n} removed" if found else f"nothing of lab {n} was left"))


@oshi.command("status")
@click.option("--name", help="Lab name (default: the only lab that is up).")
@click.option("--api", help="Controller API URL instead of a lab (unix:/path or http://host:port).")
@json_option()
@handle_errors
def status_cmd(name, api, as_json):
    """Nodes, discovered links and re-route events as the controller sees them."""
    st = _client(name, api).status()

    def human(o):
        for n, v in o["nodes"].items():
            out.print(f"{n}: datapath {v['dpid']} {'connected' if v['connected'] else 'NOT connected'}")
        for ln in o["links"]:
            out.print(f"link {ln['a']}:{ln['a_port']} - {ln['b']}:{ln['b_port']}")
        for ev in o["events"]:
            out.print(f"re-route {ev}")
    _emit(st, as_json, human)


@oshi.command("controller-restart")
@click.option("--name", help="Lab name.")
@json_option('{"seconds": until every node is connected again} as one JSON object')
@handle_errors
def controller_restart(name, as_json):
    """Restart the lab's controller (services reload from its state file; flows stay on the nodes)."""
    from harmless.oshi import lab
    _need_root()
    s = lab.restart_controller(_lab_name(name))
    _emit({"seconds": round(s, 3)}, as_json,
          lambda _o: out.print(f"controller restarted; all nodes connected again after {s:.1f} s"))


@oshi.group("service")
def service():
    """Create, list, show and delete OSHI services (through the controller's HTTP API)."""


def _api_opts(f):
    f = click.option("--api", help="Controller API URL (unix:/path or http://host:port); default: the lab's.")(f)
    return click.option("--name", "lab_name", help="Lab name (default: the only lab that is up).")(f)


@service.command("create")
@click.argument("service_name")
@click.option("--kind", type=click.Choice(["vll", "pw", "vss"]), required=True,
              help="vll = IP VLL (IP/ARP over MPLS), pw = Ethernet-over-MPLS pseudowire, vss = virtual switch.")
@click.option("-e", "--endpoint", "endpoints", multiple=True, required=True,
              help="node:port[.vlan]; port = OpenFlow port number or edge port name. 2 for vll/pw, >= 2 for vss.")
@click.option("--vss-mode", type=click.Choice(["optimized", "random"]), default="optimized",
              help="VBPs at Steiner-tree branching points (optimized) or one at a random node.")
@click.option("--dry-run", is_flag=True, help="Plan (paths, labels, VBPs) and print; install nothing.")
@json_option()
@_api_opts
@handle_errors
def service_create(service_name, kind, endpoints, vss_mode, dry_run, as_json, lab_name, api):
    """Create a service. Example: harmless oshi service create v1 --kind vll -e pe1:ce1-vll -e pe3:ce3-vll"""
    from harmless.pipelines.oshi.model import Endpoint
    try:
        eps = [Endpoint.parse(e).model_dump(exclude_none=True) for e in endpoints]
    except ValueError as e:
        raise InputError("--endpoint", str(e), "use node:port[.vlan], e.g. pe1:ce1-vll or pe1:4.100") from None
    body = {"name": service_name, "kind": kind, "endpoints": eps, "vss_mode": vss_mode}
    c = _client(lab_name, api)
    r = c.request("POST", "/v1/services?dry_run=1" if dry_run else "/v1/services", body)
    _emit(r, as_json, lambda o: _print_service(o, planned=dry_run))


def _print_service(r: dict, planned: bool = False) -> None:
    out.print(f"{'planned (not installed)' if planned else 'service'} {r['name']} ({r['kind']}, cookie {r['cookie']})")
    for s in r["segments"]:
        path = " -> ".join([f"{s['a']['node']}:{s['a']['port']}"] + [f"[{h['label']}] {h['v']}" for h in s["hops"]])
        out.print(f"  {path}:{s['b']['port']}" if s["hops"] else f"  {path} -> {s['b']['node']}:{s['b']['port']} (local)")
    for v in r.get("vbps", []):
        out.print(f"  VBP {v['bridge']} on {v['node']} (ports {v['ports']})")


@service.command("list")
@json_option()
@_api_opts
@handle_errors
def service_list(as_json, lab_name, api):
    """List the services."""
    rs = _client(lab_name, api).services()

    def human(o):
        if not o:
            out.print("no services")
        for r in o:
            _print_service(r)
    _emit(rs, as_json, human)


@service.command("show")
@click.argument("service_name")
@json_option()
@_api_opts
@handle_errors
def service_show(service_name, as_json, lab_name, api):
    """One service with its flows per node."""
    r = _client(lab_name, api).service(service_name)

    def human(o):
        _print_service(o)
        for node, fl in o["flows"].items():
            out.print(f"  {node}:")
            for f in fl:
                out.print(f"    {f}", highlight=False, soft_wrap=True)
    _emit(r, as_json, human)


@service.command("delete")
@click.argument("service_name")
@json_option()
@_api_opts
@handle_errors
def service_delete(service_name, as_json, lab_name, api):
    """Delete a service (its flows by cookie on every node, its VBPs, its labels)."""
    r = _client(lab_name, api).delete(service_name)
    _emit(r, as_json, lambda o: out.print(f"deleted {o['name']}"))


@oshi.command("demo")
@click.option("-t", "--topology", type=click.Path(dir_okay=False), help="Topology (default examples/oshi-demo.yaml).")
@click.option("--pings", default=5, show_default=True, help="Pings per end-point pair.")
@click.option("--failover/--no-failover", default=True, show_default=True,
              help="Also take a link of the VLL's path down and measure the outage.")
@click.option("--keep", is_flag=True, help="Leave the lab up afterwards (harmless oshi down removes it).")
@click.option("--json", "as_json", is_flag=True, help="Last line: one JSON object with the results.")
@quiet_option()
@handle_errors
def demo_cmd(topology, pings, failover, keep, as_json, quiet):
    """Deploy the demo topology, create an IP VLL, a PW and a VSS, ping over each, show the label swap, fail a
    link, clean up. Needs root, Open vSwitch and FRR."""
    from harmless.oshi import demo
    _need_root()
    s = demo.run(topology, _progress(quiet or as_json), pings=pings, failover=failover, keep=keep)
    if as_json:
        click.echo(json.dumps(s))
    else:
        out.print_json(data=s)
        out.print("[green]OSHI demo OK[/green]" if s["ok"] else "[red]OSHI demo FAILED[/red]")
    if not s["ok"]:
        sys.exit(1)


@oshi.command("bench")
@click.option("--rate", default=20000, show_default=True, help="Offered load, packets/s (UDP, 64-byte payload).")
@click.option("--seconds", default=5.0, show_default=True, help="Duration of each trial.")
@click.option("--trials", default=3, show_default=True, help="Trials per case (the median is reported).")
@json_option()
@quiet_option()
@handle_errors
def bench_cmd(rate, seconds, trials, as_json, quiet):
    """CPU per packet: OSHI IP vs OSHI VLL vs a plain router (OSHI paper Sec. VII).

    Best-effort IP through an OSHI node (twice through OVS plus Linux IP forwarding), MPLS label switching of a VLL
    in the same node, and a plain Linux router, measured in one run (a benchmark, not a test)."""
    from harmless.oshi import bench
    _need_root()
    r = bench.run(rate=rate, seconds=seconds, trials=trials, progress=_progress(quiet or as_json))
    if as_json:
        click.echo(json.dumps(r))
    else:
        from harmless.clikit import Col, print_table
        title, headers, rows = bench.table_rows(r)
        print_table(title, [Col(h, "left" if h == "case" else "right") for h in headers], rows)
        bench.print_notes(r, out)


__all__ = ["oshi", "err"]
