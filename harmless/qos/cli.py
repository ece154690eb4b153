"""``harmless qos``: per-port QoS of migrated ports (set/show/clear live, demo). Manual: docs/qos.md."""
from __future__ import annotations

import json

import click
from rich.table import Table

from harmless.clikit import err, handle_errors, need_root, out


def _say(quiet: bool):
    return (lambda _m: None) if quiet else (lambda m: err.print(f"[dim]{m}[/dim]", highlight=False))


@click.group()
def qos():
    """Per-port QoS on migrated ports: ingress policing (OpenFlow meter on br-otc) and egress shaping (a queue on
    the trunk), changed live without touching the switch. Rates in Mbit/s, bursts in kbit. See docs/qos.md."""


@qos.command("set")
@click.argument("switch")
@click.argument("port")
@click.option("--ingress", type=float, default=None, metavar="MBPS",
              help="police what the port's host sends to this rate (Mbit/s)")
@click.option("--egress", type=float, default=None, metavar="MBPS",
              help="shape what the port's host receives to this rate (Mbit/s)")
@click.option("--ingress-burst", type=int, default=None, metavar="KBIT",
              help="meter bucket (kbit; default 300 ms at the ingress rate)")
@click.option("--egress-burst", type=int, default=None, metavar="KBIT", help="queue burst (kbit; default 10 ms at the egress rate)")
@click.option("--scheduler", type=click.Choice(["htb", "hfsc"]), default=None,
              help="egress scheduler on kernel (system) trunks")
@click.option("--dry-run", is_flag=True, help="validate and show the change; change nothing")
@click.option("--json", "as_json", is_flag=True, help="print the result as one JSON object")
@handle_errors
def set_cmd(switch, port, ingress, egress, ingress_burst, egress_burst, scheduler, dry_run, as_json):
    """Set the QoS of PORT (e.g. Fa0/7) of SWITCH while traffic flows; values not given are kept.

    Journaled and saved in the state before OVS changes; `harmless up` keeps it while the inventory's qos of the
    port is unchanged. Example: harmless qos set sw1 Fa0/7 --egress 50 --ingress 20
    """
    from harmless.qos import live
    need_root()
    r = live.set_qos(switch, port, ingress, egress, ingress_burst, egress_burst, scheduler,
                     progress=_say(as_json), dry_run=dry_run)
    click.echo(json.dumps(r.model_dump(mode="json"))) if as_json else out.print(
        f"{r.switch} {r.interface}: {r.from_} -> {r.to}"
        + (" (dry run, nothing changed)" if dry_run else f", applied in {r.apply_ms} ms"), highlight=False)


@qos.command("clear")
@click.argument("switch", required=False)
@click.argument("port", required=False)
@click.option("--dry-run", is_flag=True, help="show what would be cleared; change nothing")
@click.option("--json", "as_json", is_flag=True, help="print the results as one JSON array")
@handle_errors
def clear_cmd(switch, port, dry_run, as_json):
    """Remove the QoS of PORT of SWITCH, of every port of SWITCH, or (no argument) of every migrated port."""
    from harmless.qos import live
    need_root()
    rs = live.clear_qos(switch, port, progress=_say(as_json), dry_run=dry_run)
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in rs]))
        return
    for r in rs:
        out.print(f"{r.switch} {r.interface}: QoS {'would be ' if dry_run else ''}removed", highlight=False)
    if not rs:
        out.print("no port has QoS")


@qos.command("show")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@handle_errors
def show_cmd(as_json):
    """Configured QoS per migrated port and what OVS enforces: meter rate, drops; queue, tc class counters."""
    from harmless.qos import live
    need_root()
    s = live.show()
    if as_json:
        click.echo(json.dumps(s.model_dump(mode="json")))
        return
    if not s.deployed:
        out.print("nothing deployed (harmless up -i INVENTORY)")
        return
    t = Table(title="per-port QoS (Mbit/s, kbit)")
    for col in ("switch", "port", "OF port", "VID", "ingress", "meter drops", "egress", "queue", "sent pkts",
                "dropped", "source"):
        t.add_column(col)
    for p in s.ports:
        q, m, qu = p.qos or {}, p.meter or {}, p.queue or {}
        t.add_row(p.switch, p.interface, str(p.ofport), str(p.vid),
                  f"{q['ingress_mbps']:g} / {m.get('burst_kb', '-')}" if q.get("ingress_mbps") else "-",
                  str(m.get("band_drops", "-")) if m else "-",
                  f"{q['egress_mbps']:g} {q.get('scheduler', '')}" if q.get("egress_mbps") else "-",
                  f"{qu['id']} on {qu['trunk']} ({qu['type']})" if qu else "-",
                  str(qu.get("sent_packets", "-")) if qu else "-", str(qu.get("dropped", "-")) if qu else "-",
                  p.source or "-")
    out.print(t)
    if s.error:
        err.print(f"[red]{s.error}[/red]")


@qos.command("demo")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object last (measurements)")
@click.option("--seconds", default=10, show_default=True, type=click.IntRange(min=2),
              help="iperf3 TCP duration per measurement (s); the issue's proof needs >= 10")
@click.option("--name", default="qosd", show_default=True, help="lab name (1-6 lowercase letters/digits)")
@handle_errors
def demo_cmd(as_json, seconds, name):
    """On the built-in lab: up, then iperf3 TCP between two lab hosts with ingress policing and egress shaping at
    10 and 50 Mbit/s, a live change while traffic flows, HFSC, and ovs-vswitchd CPU with vs without QoS; down."""
    from harmless.qos import demo
    need_root()
    r = demo.run(seconds=seconds, name=name, progress=_say(False))
    if as_json:
        click.echo(json.dumps(r))
    else:
        out.print_json(json.dumps(r))
