"""``harmless ha ...`` (the peer agent, replication, the pair's status, the two-server demo) and
``harmless failover`` (a take-over by hand). Manual: docs/high-availability.md."""
from __future__ import annotations

import json
import signal
import time

import click
from rich.markup import escape

from harmless.clikit import (EXIT_FAILURE, Col, dry_run_option, err, handle_errors, inventory_option, json_option,
                             need_root, out, print_table, progress, quiet_option, switch_option)


def _server_option():
    return click.option("--server", default=None, metavar="NAME", envvar="HARMLESS_HA_SERVER",
                        help="this server's name in the inventory's ha: pair (default: $HARMLESS_HA_SERVER)")


@click.group()
def ha():
    """Active/standby servers: the peer agent each server runs, replication to the standby, the pair's status and
    the two-server demo with its fault figures. See docs/high-availability.md."""


@ha.command()
@inventory_option()
@_server_option()
@handle_errors
def agent(inventory, server):
    """Run this server's peer agent until SIGTERM (the systemd unit harmless-ha-agent runs it).

    It sends the other server a heartbeat every ha.interval_ms over the management network, watches BFD on the
    heartbeat VLAN, and takes over a switch when the active server is gone on both paths; it stores the state the
    active replicates and builds the bridges as standby. One log line per change, on stdout.
    """
    from harmless.ha.agent import Agent
    from harmless.ha.plan import this_server
    from harmless.inventory import load_inventory
    need_root()
    me = this_server(load_inventory(inventory), inventory, server)
    a = Agent(inventory, me, say=lambda m: print(f"{time.strftime('%H:%M:%S')} {m}", flush=True))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: a.stop.set())
    a.run()


@ha.command()
@inventory_option()
@_server_option()
@quiet_option()
@json_option()
@handle_errors
def sync(inventory, server, quiet, as_json):
    """Send this (active) server's state to the standby again (after `up --no-standby`, or a standby that was away
    during `up`); it stores it and builds its bridges as standby."""
    from harmless import state as st
    from harmless.errors import InputError
    from harmless.ha import replica
    from harmless.ha.plan import local_inventory, this_server
    from harmless.inventory import load_inventory
    need_root()
    inv = load_inventory(inventory)
    me = this_server(inv, inventory, server)
    if me is None:
        raise InputError(inventory, "the inventory has no ha: section", "add one (docs/high-availability.md)")
    with st.lock(wait_s=3):
        s = st.load()
        if not s or not s.plan:
            raise InputError("harmless ha sync", "nothing is deployed on this server", "run harmless up first")
        r = replica.push(local_inventory(inv, me), me, s, progress(quiet or as_json))
    click.echo(json.dumps(r)) if as_json else out.print(
        f"standby {r['server']}: state replicated" + (", bridges built" if r["built"] else
                                                       ", bridges NOT built: " + "; ".join(r["problems"])))


@ha.command("status")
@json_option()
@handle_errors
def status_cmd(as_json):
    """This server's view of the pair, without contacting anything: roles as the devices last said, the agent's
    live view (peer heard, BFD, data path) and the last failover with its time split."""
    from harmless.ha.view import pair_view
    v = pair_view()
    if as_json:
        click.echo(json.dumps(v))
        return
    if v is None:
        out.print("no active/standby pair here (no ha.json: nothing deployed with ha:, or not replicated yet)")
        return
    print_pair(v)


def print_pair(v: dict) -> None:
    """The pair's view (:func:`harmless.ha.view.pair_view`) for people."""
    rows = [[sw, role, v["bfd"].get(sw, "-"), v["decisions"].get(sw, "-")] for sw, role in v["roles"].items()]
    print_table(f"server {v['server']} (peer {v['peer']}: {v['peer_health']})",
                [Col("switch"), Col("role"), Col("BFD"), Col("agent")], rows)
    lf = v.get("last_failover")
    if lf:
        out.print(f"last failover {lf['time']} by {lf['by']}: {lf['from_server']} -> {lf['to_server']} "
                  f"({', '.join(lf['switches']) or 'nothing moved'}), {lf['outcome']}; {lf['reason']}; "
                  f"detection {lf['detect_ms']} ms, fencing commit {lf['commit_ms']} ms, bridges "
                  f"{lf['activate_ms']} ms, controller {lf['controller_ms']} ms", highlight=False)


@click.command()
@switch_option("take over only this switch of the pair")
@click.option("--reason", default="harmless failover (by hand)", show_default=True, help="recorded with it")
@dry_run_option("read each device and show what would move; change nothing")
@quiet_option()
@json_option()
@handle_errors
def failover(switch, reason, dry_run, quiet, as_json):
    """Make THIS server the active one (maintenance): on each switch where it is the standby, move HARMLESS's VLANs
    to its own trunk in one commit (fencing the other server), read the device again, connect br-of to the
    controllers. The other server's agent drops its controllers when told, or when it reads the device.

    Journaled; a failover killed half-way is finished by `harmless recover` (it takes the roles the devices say).
    """
    from harmless import state as st
    from harmless.ha import failover as fo
    from harmless.ha import replica
    only = {switch} if switch else None
    if dry_run:
        r = fo.preview(only)
    else:
        need_root()
        from harmless import journal
        with st.lock(wait_s=3), journal.interruptible(progress(False)):   # a signal waits for the end
            s = st.load()

            def tell(names):          # the other server drops its controllers at once (if it can be reached)
                if s and s.plan and names:
                    me = fo.Plan.from_dict(s.plan).switches[0].server
                    replica.tell_fenced(s.inventory, me, names)

            r = fo.failover(progress(quiet or as_json), only=only, reason=reason, on_committed=tell)
    if as_json:
        click.echo(json.dumps(r.to_dict()))
        return
    for name, what in r.switches.items():
        out.print(f"{name}: {escape(what)}", highlight=False)
    if r.record:
        f = r.record
        out.print(f"fencing commit {f.commit_ms} ms, bridges {f.activate_ms} ms, controller "
                  f"{f.controller_ms} ms; roles now: " + ", ".join(f"{n} {x}" for n, x in r.roles.items()),
                  highlight=False)
        if f.outcome != "done":
            err.print(f"[red]error:[/red] {escape(f.outcome)}", highlight=False)
            raise SystemExit(EXIT_FAILURE)


@ha.command()
@click.option("--vendor", type=click.Choice(["ios", "eos"]), default="ios", show_default=True,
              help="the emulated switch (its fencing commit time differs: IOS transfers the candidate by SSH)")
@click.option("--fault", "faults", multiple=True,
              type=click.Choice(["kill-ovs", "trunk-down", "freeze", "mgmt-cut", "both-cut"]),
              help="run only these faults (repeatable; default: all five)")
@click.option("--name", default="hademo", show_default=True, help="lab name (1-6 lowercase letters/digits)")
@click.option("--ssh-port", default=2680, show_default=True, help="the emulated switch's SSH/eAPI port")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="also write the figures to FILE (JSON)")
@click.option("--keep", is_flag=True, help="leave the lab up afterwards")
@quiet_option()
@json_option()
@handle_errors
def demo(vendor, faults, name, ssh_port, out_file, keep, quiet, as_json):
    """The two-server lab under each fault of issue #23, with the figures: loss window per fault (ping every
    10 ms), the time split of each take-over, the samples by number of forwarding trunks, and whether down (from
    either server) gave back the exact original. Takes a few minutes (IOS: about 1.5 min per fault)."""
    from pathlib import Path

    from harmless.ha import demo as ha_demo
    need_root()
    res = ha_demo.run_demo(vendor, tuple(faults) or ha_demo.FAULTS, name, ssh_port,
                           progress=progress(quiet or as_json), keep=keep)
    if out_file:
        ha_demo.save(res, Path(out_file))
    if as_json:
        click.echo(json.dumps(res.model_dump(mode="json")))
    else:
        print_demo(res)
    if not res.ok:
        raise SystemExit(EXIT_FAILURE)


def print_demo(res) -> None:
    """The demo's figures for people."""
    rows = []
    for f in res.faults:
        sp = f.split
        rows.append([f.fault, f.hit + (f" -> {f.to_server}" if f.failover else " (no take-over)"), f"{f.loss_ms:g}",
                     f"{sp.detection_ms}/{sp.commit_ms}/{sp.controller_ms}/{sp.pipeline_ms}" if f.failover else "-",
                     " ".join(f"{k}:{v}" for k, v in sorted(f.samples_by_trunks.items())),
                     "yes" if f.down_restored else "NO", "ok" if f.ok else "FAILED"])
    print_table(f"{res.vendor}: heartbeat {res.interval_ms} ms x {res.multiplier}",
                [Col("fault"), Col("server"), Col("loss ms"), Col("detect/commit/controller/pipeline ms"),
                 Col("samples by trunks"), Col("down restored"), Col("")], rows)
    out.print(("[green]demo OK[/green]" if res.ok else "[red]demo FAILED[/red]") + f" in {res.seconds} s")


@ha.command()
@quiet_option()
@json_option()
@handle_errors
def roles(quiet, as_json):
    """Read each switch's config and take the role it says on this server (br-of connected to the controllers where
    its trunk carries HARMLESS's VLANs, to none where the other's does). The agent does this by itself (at start,
    after a freeze, every minute); for scripts and after maintenance without agents. Journaled."""
    from harmless import state as st
    from harmless.ha import failover as fo
    need_root()
    with st.lock(wait_s=3):
        r = fo.converge(progress(quiet or as_json))
    click.echo(json.dumps(r)) if as_json else [out.print(f"{n}: {x}", highlight=False) for n, x in r.items()]
