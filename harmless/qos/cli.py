"""``harmless qos``: per-port QoS of migrated ports (set/show/clear live, demo). Manual: docs/qos.md."""
from __future__ import annotations

import json

import click
from rich.markup import escape

from harmless.clikit import (Col, dry_run_option, err, handle_errors, json_option, need_root, out, print_table,
                             quiet_option, switch_option)


def _say(quiet: bool):
    return (lambda _m: None) if quiet else (lambda m: err.print(f"[dim]{escape(m)}[/dim]", highlight=False))


def _target(switch_arg: str | None, port_arg: str | None, switch: str | None, port: str | None,
            required: bool) -> tuple[str | None, str | None]:
    """The switch and port from ``--switch``/``--port`` or the positional ``SWITCH PORT`` (the older form; both
    kept, docs/cli.md). Raises InputError when they disagree or a required one is missing."""
    from harmless.errors import InputError
    for opt, a, b in (("--switch", switch_arg, switch), ("--port", port_arg, port)):
        if a is not None and b is not None and a != b:
            raise InputError("harmless qos", f"{opt} {b} and the argument {a} disagree", f"give it once ({opt})")
    sw, pt = switch or switch_arg, port or port_arg
    if required and (sw is None or pt is None):
        raise InputError("harmless qos set", "which port?", "give --switch NAME --port IFACE (e.g. --switch sw1 "
                         "--port Fa0/7)")
    if pt is not None and sw is None:
        raise InputError("harmless qos", "--port needs --switch", "add --switch NAME")
    return sw, pt


def _port_option():
    return click.option("--port", "port", default=None, metavar="IFACE",
                        help="the migrated port (its legacy interface name, e.g. Fa0/7)")


@click.group()
def qos():
    """Per-port QoS on migrated ports: ingress policing (OpenFlow meter on br-otc) and egress shaping (a queue on
    the trunk), changed live without touching the switch. Rates in Mbit/s, bursts in kbit. See docs/qos.md."""


@qos.command("set")
@click.argument("switch_arg", metavar="[SWITCH", required=False)
@click.argument("port_arg", metavar="PORT]", required=False)
@switch_option("the switch of the port")
@_port_option()
@click.option("--ingress", type=float, default=None, metavar="MBPS",
              help="police what the port's host sends to this rate (Mbit/s)")
@click.option("--egress", type=float, default=None, metavar="MBPS",
              help="shape what the port's host receives to this rate (Mbit/s)")
@click.option("--ingress-burst", type=int, default=None, metavar="KBIT",
              help="meter bucket (kbit; default 300 ms at the ingress rate)")
@click.option("--egress-burst", type=int, default=None, metavar="KBIT", help="queue burst (kbit; default 10 ms at the egress rate)")
@click.option("--scheduler", type=click.Choice(["htb", "hfsc"]), default=None,
              help="egress scheduler on kernel (system) trunks")
@dry_run_option("validate and show the change; change nothing")
@quiet_option()
@json_option()
@handle_errors
def set_cmd(switch_arg, port_arg, switch, port, ingress, egress, ingress_burst, egress_burst, scheduler, dry_run,
            quiet, as_json):
    """Set the QoS of a migrated port (--switch sw1 --port Fa0/7) while traffic flows; values not given are kept.

    Journaled and saved in the state before OVS changes; `harmless up` keeps it while the inventory's qos of the
    port is unchanged. Example: harmless qos set --switch sw1 --port Fa0/7 --egress 50 --ingress 20
    (the older form `harmless qos set sw1 Fa0/7 ...` works too).
    """
    from harmless.qos import live
    switch, port = _target(switch_arg, port_arg, switch, port, required=True)
    need_root()
    r = live.set_qos(switch, port, ingress, egress, ingress_burst, egress_burst, scheduler,
                     progress=_say(quiet or as_json), dry_run=dry_run)
    click.echo(json.dumps(r.model_dump(mode="json"))) if as_json else out.print(
        f"{r.switch} {r.interface}: {r.from_} -> {r.to}"
        + (" (dry run, nothing changed)" if dry_run else f", applied in {r.apply_ms} ms"), highlight=False)


@qos.command("clear")
@click.argument("switch_arg", metavar="[SWITCH", required=False)
@click.argument("port_arg", metavar="[PORT]]", required=False)
@switch_option("only the ports of this switch")
@_port_option()
@dry_run_option("show what would be cleared; change nothing")
@quiet_option()
@json_option("the results as one JSON array")
@handle_errors
def clear_cmd(switch_arg, port_arg, switch, port, dry_run, quiet, as_json):
    """Remove the QoS of one port (--switch sw1 --port Fa0/7), of every port of a switch (--switch sw1), or
    (neither) of every migrated port. No port with QoS: says so, exit 0. The older positional form
    `harmless qos clear sw1 Fa0/7` works too."""
    from harmless.qos import live
    switch, port = _target(switch_arg, port_arg, switch, port, required=False)
    need_root()
    rs = live.clear_qos(switch, port, progress=_say(quiet or as_json), dry_run=dry_run)
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in rs]))
        return
    for r in rs:
        out.print(f"{r.switch} {r.interface}: QoS {'would be ' if dry_run else ''}removed", highlight=False)
    if not rs:
        out.print("no port has QoS")


@qos.command("show")
@switch_option("only the ports of this switch")
@json_option("one JSON object")
@handle_errors
def show_cmd(switch, as_json):
    """Configured QoS per migrated port and what OVS enforces: meter rate, drops; queue, tc class counters."""
    from harmless.clikit import pick_switch
    from harmless.qos import live
    need_root()
    s = live.show()
    if switch is not None and s.deployed:
        pick_switch(list(dict.fromkeys(p.switch for p in s.ports)), switch, "harmless qos show --switch")
        s = s.model_copy(update={"ports": [p for p in s.ports if p.switch == switch]})
    if as_json:
        click.echo(json.dumps(s.model_dump(mode="json")))
        return
    if not s.deployed:
        out.print("nothing deployed (harmless up -i INVENTORY)")
        return
    rows = []
    for p in s.ports:
        q, m, qu = p.qos or {}, p.meter or {}, p.queue or {}
        rows.append([p.switch, p.interface, str(p.ofport), str(p.vid),
                     f"{q['ingress_mbps']:g} / {m.get('burst_kb', '-')}" if q.get("ingress_mbps") else "-",
                     str(m.get("band_drops", "-")) if m else "-",
                     f"{q['egress_mbps']:g} {q.get('scheduler', '')}" if q.get("egress_mbps") else "-",
                     f"{qu['id']} on {qu['trunk']} ({qu['type']})" if qu else "-",
                     str(qu.get("sent_packets", "-")) if qu else "-", str(qu.get("dropped", "-")) if qu else "-",
                     p.source or "-"])
    print_table("per-port QoS (Mbit/s, kbit)",
                [Col("switch"), Col("port"), Col("OF port", "right"), Col("VID", "right"), Col("ingress"),
                 Col("meter drops", "right"), Col("egress"), Col("queue"), Col("sent pkts", "right"),
                 Col("dropped", "right"), Col("source")], rows, keys=2)
    if s.error:
        err.print(f"[red]{escape(s.error)}[/red]")


@qos.command("demo")
@json_option("one JSON object last (measurements)")
@quiet_option()
@click.option("--seconds", default=10, show_default=True, type=click.IntRange(min=2),
              help="iperf3 TCP duration per measurement (s); the issue's proof needs >= 10")
@click.option("--name", default="qosd", show_default=True, help="lab name (1-6 lowercase letters/digits)")
@handle_errors
def demo_cmd(as_json, quiet, seconds, name):
    """On the built-in lab: up, then iperf3 TCP between two lab hosts with ingress policing and egress shaping at
    10 and 50 Mbit/s, a live change while traffic flows, HFSC, and ovs-vswitchd CPU with vs without QoS; down."""
    from harmless.qos import demo
    need_root()
    r = demo.run(seconds=seconds, name=name, progress=_say(quiet))
    if as_json:
        click.echo(json.dumps(r))
    else:
        out.print_json(json.dumps(r))
