"""The ``harmless`` command line (click). Every command has ``--help``; machine output with ``--json``.

One convention for every command (docs/cli.md, built in :mod:`harmless.clikit`): the same option for the same thing
(``-i/--inventory``, ``--switch NAME``, ``--config [SWITCH=]FILE``, ``-q/--quiet``, ``--json``, ``--dry-run``),
tables whole in a terminal and plain tab-separated lines in a pipe, and one table of exit codes: 0 done or nothing
to do, 1 a failure (rolled back), 2 refused/bad input (nothing changed), 3 when ``up`` migrated some switches and
rolled back the others, 4 ``up --keep-on-no-controller`` kept a deployment no controller reached, 5 ``down`` (or
``up``) stopped because the operator changed what HARMLESS owns (nothing changed; :mod:`harmless.ownership`), 6
unfinished (a journal is left: run ``harmless down``), 7 ``status``: a switch differs from what HARMLESS deployed, 130
interrupted (Ctrl-C, SIGTERM, SIGHUP: a dropped SSH session or closed terminal) and rolled back. Output that cannot
be written (a closed pipe or terminal) is dropped and changes neither what a run does nor its exit code
(:func:`harmless.clikit.guard_output`). Errors print one line ``error: <file>: <field>: <problem> (fix: ...)`` on
stderr, no traceback.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from harmless import __version__
# the shared helpers live in harmless.clikit: component command groups import them from there, never from here
from harmless.clikit import (EXIT_DIFFERS, EXIT_FAILURE, EXIT_NO_CONTROLLER, EXIT_PARTIAL, EXIT_UNFINISHED, Col,
                             config_option, dry_run_option, err, guard_output, handle_errors, inventory_option,
                             json_option, out, pick_switch, print_findings, print_table, quiet_option, split_configs,
                             switch_option)
from harmless.clikit import need_root as _need_root
from harmless.clikit import progress as _progress

__all__ = ["EXIT_NO_CONTROLLER", "EXIT_PARTIAL", "main"]
_FINAL_EVENTS = {"migrated", "unchanged", "failed", "restored"}


def _holds_signals(fn):
    """Decorator (below ``handle_errors``): SIGINT/SIGTERM/SIGHUP are a flag for the whole ``up``/``down``/``recover``
    command (:func:`harmless.journal.interruptible`): one before the run starts stops it before any change, one
    during it rolls back (``up``) or lets it finish (``down``), and one after it cannot kill the process while it
    prints the result, whose exit code says what the switches are now."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        from harmless import journal
        if kw.get("dry_run"):               # changes nothing: Ctrl-C simply stops it
            return fn(*a, **kw)
        with journal.interruptible(lambda _m: None):
            return fn(*a, **kw)
    return wrapper


@contextlib.contextmanager
def _fleet_bar(n_switches: int, quiet: bool, what: str):
    """A rich progress bar over switches (only for more than one switch); yields the ``on_switch`` callback."""
    if quiet or n_switches < 2:
        yield lambda _name, _event: None
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[last]}"), console=err, transient=False) as bar:
        task = bar.add_task(what, total=n_switches, last="")

        def on_switch(name: str, event: str) -> None:
            bar.update(task, advance=1 if event in _FINAL_EVENTS else 0, last=f"{name}: {event}")
        yield on_switch


def _print_results(results: dict) -> None:
    colour = {"migrated": "green", "unchanged": "green", "given back": "green", "failed": "red"}
    print_table("switches", [Col("switch"), Col("result"), Col("detail", free=True)],
                [[name, Text(r["status"], style=colour.get(r["status"], "")), r.get("error") or ""]
                 for name, r in results.items()])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harmless")
def main():
    """HARMLESS: turn a legacy 802.1Q switch into an OpenFlow switch.

    Each migrated access port becomes an access port of its own VLAN; a trunk hairpins the traffic to this server,
    where Open vSwitch translates VLANs to ports (br-otc) and exposes br-of-<switch> to your OpenFlow controller.

    Typical use: harmless plan -i inv.yaml; harmless up -i inv.yaml; harmless status; harmless down.
    Try it without a switch: harmless demo.
    """
    guard_output()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("paramiko", "netmiko", "napalm"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)


# ----------------------------------------------------------------------------- plan / up / down / status
def _keep_notes(sp) -> list[str]:
    """One note per kept feature (inventory keep, preflight), naming every port that keeps it."""
    from harmless.preflight import KEEP_CONSEQUENCE
    by_feature: dict[str, list[str]] = {}
    for p in sp.ports:
        for k in getattr(p, "keep", ()):
            by_feature.setdefault(k, []).append(p.interface)
    return [f"note: {', '.join(ports)} {'keeps' if len(ports) == 1 else 'keep'} {k} on the switch: "
            f"{KEEP_CONSEQUENCE[k]}" for k, ports in by_feature.items()]


def _controller_line(sp, checks) -> str:
    """``controllers: tcp:IP:PORT (reachable, OpenFlow13 HELLO), ...`` with what the check from the server found."""
    if not sp.controllers:
        return "controllers: (none: br-of stays fail-secure, no flows)"
    said = {c.target: c for c in checks if c.switch == sp.name}

    def one(t: str) -> str:
        c = said.get(t)
        if c is None:
            return t
        if c.stage == "ok":
            return f"{t} (reachable, {c.hello} HELLO)"
        return f"{t} ({'not checked' if c.stage == 'unchecked' else 'unreachable' if not c.reachable else 'no HELLO'}"\
               f": {c.reason})"
    return "controllers: " + ", ".join(one(t) for t in sp.controllers)


def _print_plan(res) -> None:
    for sp in res.plan.switches:
        tunnels = any(p.l2pt for p in sp.ports)      # link-local protocols the switch tunnels (docs/transparency.md)
        print_table(f"{sp.name}: {sp.bridge} (datapath id {sp.datapath_id}, {', '.join(sp.protocols)})",
                    [Col("legacy port"), Col("OpenFlow port", "right"), Col("VID"), Col("trunk")]
                    + ([Col("tunnelled")] if tunnels else []),
                    [[p.interface, str(p.ofport), f"{p.vid} (S-tag {sp.stag_tpid:#06x}, QinQ)" if p.qinq
                      else str(p.vid), p.trunk] + ([", ".join(p.l2pt) or "-"] if tunnels else []) for p in sp.ports])
        for line in _keep_notes(sp):
            out.print(line, highlight=False, markup=False)
        for tr in sp.trunks:
            out.print(f"trunk {tr.switch_port} -> {tr.server_interface}: VIDs {','.join(map(str, tr.vids)) or '-'}"
                      + (" (shared: its other VLANs stay)" if tr.shared else "")
                      + (" (shut down now: the plan brings it up)" if tr.bring_up else ""), highlight=False,
                      markup=False)
        for tr in sp.peer_trunks:        # an active/standby pair (docs/high-availability.md)
            out.print(f"standby {sp.peer}: trunk {tr.switch_port} -> {tr.server_interface}: heartbeat VLAN "
                      f"{sp.heartbeat_vid} only (BFD every {sp.heartbeat_ms} ms x {sp.heartbeat_mult}); this server "
                      f"({sp.server}) is the active one", highlight=False, markup=False)
        out.print(_controller_line(sp, res.controllers), highlight=False, markup=False)
        print_findings([f for f in res.findings if f.switch == sp.name], out)
        if getattr(res, "reverts", {}).get(sp.name):
            out.print(f"given back first (no longer in the plan): {', '.join(res.reverts[sp.name])}",
                      highlight=False, markup=False)
        _print_change(res, sp.name)
    print_findings([f for f in res.findings if f.switch not in {sp.name for sp in res.plan.switches}], out)


def _print_change(res, name: str) -> None:
    """The switch's full diff (removals and additions per block), else the device's own diff."""
    change = res.changes.get(name)
    if change is not None:
        out.print(f"[bold]switch config diff for {name}[/bold] ("
                  + ("none, already configured" if change.empty else f"- removed, + added: {change.summary()}")
                  + ")")
        if not change.empty:
            out.print(change.text(), highlight=False, markup=False, end="")
        return
    diff = res.diffs.get(name, "")
    out.print(f"[bold]switch config diff for {name}[/bold]" + ("" if diff else ": (none, already configured)"))
    if diff:
        out.print(diff, highlight=False, markup=False)


def _inventory_switches(inventory: str, switch: str | None) -> tuple[object, set[str] | None]:
    """The validated inventory and the ``--switch`` selection (None: every switch). Raises InputError (exit 2)."""
    from harmless.inventory import load_inventory
    inv = load_inventory(inventory)
    chosen = pick_switch([sw.name for sw in inv.switches], switch, f"{inventory}: switches")
    return inv, (set(chosen) if switch else None)


def _only(selection) -> dict:
    """``{"only": selection}`` for the orchestrator when ``--switch`` was given, else ``{}`` (the call stays the
    one without --switch)."""
    return {} if selection is None else {"only": selection}


def _offline_configs(inv, inventory: str, configs: tuple[str, ...], switch: str | None) -> dict[str, Path]:
    """``--config [SWITCH=]FILE`` values of ``plan`` as ``{switch: file}``: a FILE without SWITCH= is the config
    of ``--switch``, or of the inventory's only switch.

    Raises:
        InputError: no switch to give a bare FILE to, a switch other than ``--switch``, a switch given twice.
    """
    from harmless.errors import InputError
    names = [sw.name for sw in inv.switches]
    default = switch or (names[0] if len(names) == 1 else None)
    out_: dict[str, Path] = {}
    for name, path in split_configs(configs):
        name = name or default
        if name is None:
            raise InputError(f"--config {path}", f"{inventory} has {len(names)} switches: which one is this the "
                             "config of?", f"write --config SWITCH={path} (one of: {', '.join(names)})")
        if switch and name != switch:
            raise InputError(f"--config {name}={path}", f"--switch {switch} plans only {switch}",
                             f"drop --switch, or give --config {switch}=FILE")
        if name in out_:
            raise InputError("--config", f"switch {name} is given twice", "give one saved config per switch")
        out_[name] = path
    return out_


@main.command()
@inventory_option()
@switch_option("plan only this switch of the inventory (the others are not contacted; br-otc numbers are kept)")
@config_option("plan offline from a saved running config, without contacting the switch (repeatable: one per "
               "switch; only the switches given are planned, the diff is computed locally). SWITCH= may be left "
               "out with --switch or a one-switch inventory")
@quiet_option()
@json_option("the plan and diff as one JSON object")
@handle_errors
def plan(inventory, switch, configs, quiet, as_json):
    """Show the VLAN/port plan and the switch config diff. Changes nothing.

    Reads the device (its port model: what every port is now, VLANs in use, VTP mode, LAGs), runs the preflight
    rules (docs/preflight.md: refuses e.g. an access port that is a trunk, a LAG member or routed, a VTP server),
    allocates one VID per migrated access port from vlan_range (avoiding every VID the switch defines or
    references), maps legacy port N to OpenFlow port N, renders the tagging config and asks the device for the
    diff (the candidate is discarded).

    With --config [SWITCH=]FILE nothing is contacted: the same model, rules and planner run on the saved running
    config, and the diff is computed locally (the rendered lines the saved config does not have).
    """
    from harmless import orchestrator
    if configs:
        from harmless import offline
        inv, _ = _inventory_switches(inventory, switch)
        res = offline.plan_offline(inv, inventory, _offline_configs(inv, inventory, configs, switch))
    else:
        only = _inventory_switches(inventory, switch)[1] if switch else None
        res = orchestrator.plan(inventory, _progress(quiet or as_json), **_only(only))
    if as_json:
        click.echo(json.dumps(res.to_dict()))
    else:
        _print_plan(res)


@main.command()
@inventory_option()
@switch_option("read, change and report only this switch of the inventory; every other deployed switch keeps its "
               "deployed plan and is not contacted")
@dry_run_option("same as `harmless plan`: show what would change, change nothing")
@click.option("--revert-in", default=None, type=int, metavar="S",
              help="commit-confirm: a switch reverts by itself unless confirmed within S s (confirmed once the server "
                   "side verifies). Default: 300 s on switches that can, a plain commit (said) on those that cannot; "
                   "given, a switch that cannot commit-confirm is refused before anything changes (exit 2)")
@click.option("--wait-controller", default=10.0, show_default=True, type=click.FloatRange(min=0), metavar="S",
              help="wait up to S seconds until every br-of has a connected controller; none: roll back, exit 1")
@click.option("--no-wait", is_flag=True, help="do not wait for a controller (same as --wait-controller 0)")
@click.option("--keep-on-no-controller", is_flag=True,
              help="when no controller connects in time, keep the deployment (exit 4) instead of rolling back")
@click.option("--server", default=None, metavar="NAME", envvar="HARMLESS_HA_SERVER",
              help="with an ha: pair, this server's name (default: $HARMLESS_HA_SERVER); it becomes the active one")
@click.option("--no-standby", is_flag=True,
              help="with an ha: pair, deploy although the standby does not take the replicated state (else: roll "
                   "back); harmless ha sync sends it later")
@quiet_option()
@json_option()
@handle_errors
@_holds_signals
def up(inventory, switch, dry_run, revert_in, wait_controller, no_wait, keep_on_no_controller, server, no_standby,
       quiet, as_json):
    """Configure the switch(es), build the translator and the OpenFlow bridge(s), connect the controller(s).

    Saves each switch's running config first; on any failure restores it and removes what was built.
    Running it again applies only differences (an empty device diff touches nothing); after an
    ovs-vswitchd restart it repairs bridges and flows. After an inventory edit it first gives back what HARMLESS no
    longer needs (a port removed from the inventory gets its original config back and leaves the trunk; a moved VID
    or trunk leaves nothing behind); if the operator changed such a port, VLAN or trunk by hand since the last up,
    it stops before any change (exit 5) and shows the lines.

    Several switches are worked on in parallel (Nornir), with a progress bar and a result table. A switch that
    fails is rolled back alone (its device ends in its original config) and the others stay migrated:
    exit status 3 then; 0 when every switch is up; 1 (or 2 for bad input) when nothing was migrated.

    Then it waits (--wait-controller, default 10 s) until at least one controller of every br-of is connected and
    names them; if none connects, everything is rolled back and the exit status is 1 (with
    --keep-on-no-controller the deployment stays and the exit status is 4).

    With --switch NAME only that switch is read, changed and reported; the other switches of the deployment keep
    their deployed plan (br-of, translator flows) and their devices are not contacted.

    With an ha: pair (docs/high-availability.md) run it on the server that is to be active: the switch carries the
    VLANs on its trunk, and before up reports success the standby has stored the state and built its bridges.
    """
    from harmless import orchestrator
    inv, only = _inventory_switches(inventory, switch)   # bad input is refused (exit 2) before anything else
    if dry_run:
        res = orchestrator.plan(inventory, _progress(quiet or as_json), **_only(only))
        click.echo(json.dumps(res.to_dict())) if as_json else _print_plan(res)
        return
    from harmless.ownership import DriftConflict
    n = len(only) if only else len(inv.switches)
    _need_root()
    try:
        with _fleet_bar(n, quiet or as_json, "harmless up") as on_switch:
            r = orchestrator.up(inventory, _progress(quiet or as_json), revert_in=revert_in, on_switch=on_switch,
                                wait_controller=0 if no_wait else wait_controller,
                                keep_on_no_controller=keep_on_no_controller, **_only(only),
                                **({"server": server} if server else {}),
                                **({"no_standby": True} if no_standby else {}))
    except DriftConflict as e:
        _print_conflicts(e, as_json)
        raise
    if as_json:
        click.echo(json.dumps(r.model_dump(mode="json")))
    else:
        _print_up(r, n)
    if r.controllers_missing:
        err.print(f"[red]error:[/red] {escape(r.controllers_missing)} (deployment kept: --keep-on-no-controller)",
                  highlight=False, soft_wrap=True)
        sys.exit(EXIT_NO_CONTROLLER)
    if r.failed:
        err.print(f"[red]error:[/red] {len(r.failed)} of {n} switches failed and were rolled back alone "
                  f"({', '.join(r.failed)}); the others are migrated")
        sys.exit(EXIT_PARTIAL)


def _print_up(r, n: int) -> None:
    """What ``harmless up`` did (an :class:`harmless.results.UpResult`), for people."""
    if n > 1 or r.failed:
        _print_results({name: x.model_dump() for name, x in r.results.items()})
    else:
        for name, changed in r.changed.items():
            out.print(f"[green]up[/green]: {name} " + ("configured" if changed else "unchanged (already configured)"))
    for br, targets in r.controllers_connected.items():
        out.print(f"controller connected to {br}: {', '.join(targets)}")
    if r.standby is not None:
        sb = r.standby
        out.print(f"standby {sb.get('server', '')}: " + ("state replicated, bridges built as standby" if sb.get("built")
                  else "state replicated, bridges NOT built: " + "; ".join(sb.get("problems", []))
                  if sb.get("replicated") else f"state not replicated ({sb.get('reason', '')})"), highlight=False)
    out.print("see `harmless status` for ports, counters and controller connections")


def _print_down(r) -> None:
    """What ``harmless down`` did (an :class:`harmless.results.DownResult`), for people."""
    for name, ok in r.restored.items():
        if name in (r.origins or {}):
            out.print(f"{name}: original from {escape(r.origins[name])}", highlight=False, soft_wrap=True)
        kept = r.kept.get(name, [])
        what = f"the original + {len(kept)} change(s) kept" if kept else "the saved original"
        out.print(f"{name}: running config " + (f"[green]equals {what}[/green]" if ok else
                                                 f"[red]differs from {what}[/red]")
                  + ("" if r.ports_restored.get(name) else "; every port has its original mode and VLANs"),
                  highlight=False, soft_wrap=True)
        if kept:
            out.print(f"  kept (changed since up, not HARMLESS's): {', '.join(kept)}", highlight=False, markup=False,
                      soft_wrap=True)
        if r.discarded.get(name):
            out.print(f"  discarded (--discard-changes): {', '.join(r.discarded[name])}", highlight=False,
                      markup=False, soft_wrap=True)
    for line in [*(r.copies or []), *(r.notes or [])]:
        out.print(escape(line), highlight=False, soft_wrap=True)
    out.print("; ".join(dict.fromkeys(r.server or ["no bridges were left"])))
    if r.standby is not None:
        sb = r.standby
        out.print(f"other server {sb['server']}: " + (("; ".join(sb.get("removed") or ["nothing was left"]))
                  if sb.get("reached") and not sb.get("error") else f"[red]not done[/red] ({escape(sb.get('error', ''))}"
                  "; run harmless down there)"), highlight=False)


def _print_revert(rv) -> None:
    """One switch of ``down --dry-run`` or of a conflict (a :class:`harmless.ownership.SwitchRevert`), plainly."""
    how = {"merge": "its original with the changes made since up kept", "exact": "its original exactly (HARMLESS "
           "has no record of what it wrote there)", "discard": "its original exactly (--discard-changes)"}[rv.mode]
    head = f"gets back {how}" + (" = the original byte for byte" if rv.equals_original and rv.mode == "merge" else "")
    if not rv.original:                       # an up's objects to give back (no whole-switch target)
        head = "what this inventory gives back was changed by hand since the last up"
    out.print(f"[bold]{rv.switch}[/bold]: {head}", highlight=False, soft_wrap=True)
    for title, items in (("reverted (HARMLESS's)", rv.reverted), ("kept (the operator's)", rv.kept),
                         ("discarded (the operator's, lost)", rv.discarded)):
        if items:
            out.print(f"  {title}: {', '.join(c.label for c in items)}", highlight=False, markup=False, soft_wrap=True)
    for c in rv.conflicts:
        out.print(f"  [red]conflict[/red] {escape(c.label)}: changed by hand since up", highlight=False, soft_wrap=True)
        for tag, lines in (("before HARMLESS", c.original), ("HARMLESS left", c.harmless), ("device now", c.now)):
            out.print(f"    {tag}: " + (" | ".join(x.strip() for x in lines) if lines else "(absent)"),
                      highlight=False, markup=False, soft_wrap=True)
    if rv.diff:
        out.print(rv.diff, highlight=False, markup=False, soft_wrap=True)


def _print_conflicts(e, as_json: bool) -> None:
    """The switches of a :class:`harmless.ownership.DriftConflict` (``--json``: ``{"conflicts": {switch: ...}}``)."""
    if as_json:
        click.echo(json.dumps({"conflicts": {rv.switch: rv.model_dump(mode="json") for rv in e.reverts}}))
    else:
        for rv in e.reverts:
            _print_revert(rv)


def _print_preview(p) -> None:
    """``harmless down --dry-run`` (a :class:`harmless.results.DownPreview`), for people."""
    if p.unfinished_journal:
        out.print(f"would finish {p.unfinished_journal}", highlight=False, soft_wrap=True)
    for rv in p.switches.values():
        _print_revert(rv)
    for name, why in p.unreachable.items():
        out.print(f"[red]{name}[/red]: cannot be read ({escape(why)})", highlight=False, soft_wrap=True)
    out.print("server: would remove " + (", ".join(p.bridges) or "no bridge (none left)")
              + (f"; would stop HARMLESS's Open vSwitch in {', '.join(p.stop_ovs)}" if p.stop_ovs else ""),
              highlight=False, soft_wrap=True)
    if p.blocked:
        out.print("[red]down would stop[/red]: the operator changed what HARMLESS owns (conflicts above); keep the "
                  "change by editing it back, or run harmless down --discard-changes", highlight=False, soft_wrap=True)
    out.print("nothing was changed (--dry-run)")


def _down_dry_run(inventory, discard_changes, switch, quiet, as_json) -> None:
    """``down --dry-run``: print :func:`harmless.orchestrator.down_preview` (nothing deployed: the line, exit 0;
    with --json the empty preview)."""
    from harmless import orchestrator
    from harmless.errors import NothingToDo
    from harmless.results import DownPreview
    try:
        p = orchestrator.down_preview(_progress(quiet or as_json), discard_changes=discard_changes,
                                      inventory_path=inventory, only=switch)
    except NothingToDo as e:
        if not as_json:
            raise                    # handle_errors: the line, exit 0
        err.print(escape(str(e)), highlight=False, soft_wrap=True)
        p = DownPreview(switches={})
    click.echo(json.dumps(p.model_dump(mode="json"))) if as_json else _print_preview(p)


@main.command()
@inventory_option(False, "inventory YAML file: also give back every switch of it that this machine does not know "
                         "(a fresh machine, a lost state directory), from the copy of its original kept on the "
                         "switch or in originals.directory, once its SHA-256 verifies")
@dry_run_option("show per switch what would be given back (HARMLESS's objects reverted, the operator's changes "
                "kept, conflicts) and which bridges would be removed; change nothing")
@click.option("--discard-changes", is_flag=True,
              help="give every switch its original exactly, also where the operator changed a migrated port, a "
                   "HARMLESS VLAN or the trunk (every change made since up is lost)")
@switch_option("give back only this switch of the deployment; the others stay migrated (as an up without it "
               "in the inventory would do)")
@quiet_option()
@json_option()
@handle_errors
@_holds_signals
def down(inventory, dry_run, discard_changes, switch, quiet, as_json):
    """Give every switch back its original configuration, keep what the operator changed since, remove the bridges.

    HARMLESS owns only what it wrote (the migrated ports, its VLANs, the trunk): down reverts exactly those and keeps
    every change made by hand since up elsewhere (a new VLAN, a description, an unmigrated port, an ACL). Without
    such changes the device ends byte for byte as its original. A change by hand to what HARMLESS owns stops down
    before anything changes (exit 5), with the lines shown: edit it back and retry, or use --discard-changes.

    Works from whatever is left: the state, the journal of an interrupted up/down (Ctrl-C, kill, power loss), and
    the retained original backups (so a lost or corrupt state file loses nothing). Each device is proven equal to its
    target line by line before the bridges are removed and HARMLESS's private Open vSwitch is stopped.
    Nothing deployed: says so, exit 0 (with --json the empty result: no switch restored, nothing removed).

    With -i INVENTORY it also works on a machine that never saw the deployment: each migrated switch of the
    inventory gets back the original HARMLESS kept on the switch itself (or in originals.directory), after its
    SHA-256 is verified; it says where each came from. A copy that does not verify is refused and nothing changes.
    Once a switch is proven back, the copies of its original are removed.

    With --switch NAME only that switch is given back (its original with the operator's changes kept, proven), its
    br-of removed and the state told; the other switches and their bridges stay as they are.
    """
    _need_root()
    from harmless import orchestrator
    from harmless import state as st
    from harmless.errors import NothingToDo
    from harmless.ownership import DriftConflict
    from harmless.results import DownResult
    if switch is not None and (discard_changes or inventory):
        from harmless.errors import InputError
        raise InputError("harmless down --switch", "--switch gives one switch of this deployment back and keeps the "
                         "operator's changes", "run it without --discard-changes and -i, or harmless down "
                         "--discard-changes / down -i for every switch")
    if dry_run:
        return _down_dry_run(inventory, discard_changes, switch, quiet, as_json)
    try:
        n = len(s.switches) if (s := st.load()) else 0
    except st.StateError:
        n = 0
    if inventory and not n:
        from harmless.inventory import load_inventory
        n = len(load_inventory(inventory).switches)
    try:
        with _fleet_bar(n, quiet or as_json, "harmless down") as on_switch:
            r = orchestrator.down(_progress(quiet or as_json), on_switch=on_switch, discard_changes=discard_changes,
                                  inventory_path=inventory) if switch is None else \
                orchestrator.down_switch(switch, _progress(quiet or as_json), on_switch=on_switch)
    except DriftConflict as e:
        _print_conflicts(e, as_json)
        raise
    except NothingToDo as e:
        if not as_json:
            raise                    # handle_errors: the line, exit 0
        err.print(escape(str(e)), highlight=False, soft_wrap=True)
        r = DownResult(restored={}, config_restored=False, ports_restored={}, server=[])
    if as_json:
        click.echo(json.dumps(r.model_dump(mode="json")))
    else:
        _print_down(r)


_WOULD = {"qos": "apply the QoS the state records (an interrupted harmless qos set/clear)",
          "restore": "run the interrupted harmless restore again (server side only)",
          "previous deployment": "put the switches it touched back as before it and rebuild the bridges to the "
                                 "deployed plan",
          "down": "do what harmless down does: every switch back to its original config, bridges removed"}


@main.command()
@dry_run_option("say what it would do (read from the journal), change nothing")
@quiet_option()
@json_option()
@handle_errors
@_holds_signals
def recover(dry_run, quiet, as_json):
    """Finish what an interrupted `up` or `down` left behind (read from its journal).

    An interrupted `up` on top of a running deployment: the switches it touched go back to the config they had before
    it and the bridges to the deployed plan. An interrupted first `up` or a `down`: the same as `harmless down`
    (every switch back to its original, bridges removed). Nothing to do: says so, exit 0.
    """
    from harmless import orchestrator
    if dry_run:
        r = orchestrator.recover_preview()
        if as_json:
            click.echo(json.dumps(r.model_dump(mode="json")))
        elif r.recovered == "nothing":
            out.print("nothing to recover (no interrupted run)")
        else:
            out.print(f"{r.details['journal']}; recover would {_WOULD[r.recovered]}"
                      + (f" (switches it may have changed: {', '.join(r.switches)})" if r.switches else "")
                      + "; nothing was changed", highlight=False, markup=False)
        return
    _need_root()
    r = orchestrator.recover(_progress(quiet or as_json))
    if as_json:
        click.echo(json.dumps(r.model_dump(mode="json")))
    elif r.recovered == "nothing":
        out.print("nothing to recover (no interrupted run)")
    elif r.recovered == "restore":
        out.print("recovered: the interrupted harmless restore was run again; the server side is rebuilt")
    elif r.recovered == "previous deployment":
        out.print(f"recovered: {', '.join(r.switches or []) or 'no switch'} back as before the interrupted up; "
                  "bridges rebuilt to the deployed plan")
    elif r.down is not None:
        _print_down(r.down)


@main.command()
@switch_option("only the backups of this switch")
@json_option("the list as one JSON array (with the whole SHA-256)")
@handle_errors
def backups(switch, as_json):
    """List the switch configs HARMLESS saved: switch, time, SHA-256, role, status and file.

    The *active original* of a switch (role original, status active) is what `harmless down` gives back; it was
    taken at the switch's first migration and is never overwritten. `restored` originals were proven back on the
    device by a `down`; `pre-run` backups were taken before an incremental `up` (for `harmless recover`). The table
    shows the first 16 hex digits of the SHA-256 (`sha256sum FILE` prints it whole, so does --json).
    """
    from harmless import orchestrator
    rows = orchestrator.backups()
    if switch is not None:
        pick_switch(list(dict.fromkeys(r["switch"] for r in rows)), switch, "harmless backups --switch")
        rows = [r for r in rows if r["switch"] == switch]
    if as_json:
        click.echo(json.dumps(rows))
        return
    if not rows:
        out.print("no backups saved yet")
        return
    print_table("saved switch configs (oldest first)",
                [Col("switch"), Col("time (UTC)"), Col("SHA-256 prefix"), Col("role"), Col("status"), Col("file")],
                [[r["switch"], r["time"], r["sha256"][:16], r["role"],
                  Text("active original", style="bold green") if r["role"] == "original" and r["status"] == "active"
                  else r["status"], r["file"]] for r in rows])


def _port_down(p: dict) -> str:
    """The status table's "port-down" cell: a controller holds the port down, and/or HARMLESS shut it for it."""
    held = ["controller"] if p.get("admin_down") else []
    return ", ".join(held + (["device shut"] if p.get("device_shut") else [])) or "no"


def _print_status_switch(sw: dict) -> None:
    """One switch of ``harmless status`` (a dumped :class:`harmless.results.SwitchStatus`), for people."""
    from harmless.qos.model import PortQos
    print_table(f"{sw['name']}: {sw['bridge']} (datapath id {sw['datapath_id']})",
                [Col("legacy port"), Col("OF port", "right"), Col("VID", "right"), Col("device link"),
                 Col("br-of state"), Col("held"), Col("port-down"), Col("rx packets", "right"),
                 Col("tx packets", "right")],
                [[p["interface"], str(p["ofport"]), str(p["vid"]), p["device_link"], p.get("br_of_state", "-"),
                  "yes" if p.get("blocked_by_watch") else "no", _port_down(p), str(p["rx_packets"]),
                  str(p["tx_packets"])] for p in sw["ports"]])
    for p in sw["ports"]:           # per-port QoS (docs/qos.md; harmless qos show for counters)
        if p.get("qos"):
            out.print(f"qos {p['interface']}: {PortQos(**p['qos']).describe()}", highlight=False, markup=False)
    for c in sw["controllers"] or [{"target": "(none)", "is_connected": False, "role": "-", "state": "-"}]:
        out.print(f"controller {escape(c['target'])}: " + ("[green]connected[/green]" if c["is_connected"] else
                                                   "[red]not connected[/red]") + f", role {escape(c['role'])}"
                  + (f", last error: {escape(c['last_error'])}" if c.get("last_error") and not c["is_connected"]
                     else ""), highlight=False)
        for line in c.get("tls_log") or []:      # TLS handshake/certificate failures from ovs-vswitchd's log
            out.print(f"  [yellow]TLS[/yellow] {escape(line.split('|', 4)[-1].strip())}", highlight=False)
    for name, tr in sw["trunks"].items():
        out.print(f"trunk {name}: link {tr['link_state']}, rx {tr['rx_packets']}, tx {tr['tx_packets']}"
                  + (f", type {tr['type']}" if tr.get("type") else "")
                  + (f" ({tr['xdp_mode']} XDP)" if tr.get("xdp_mode") else "")
                  + (f" [auto: {tr['why']}]" if tr.get("why") else "")
                  + (f", error {tr['error']}" if tr.get("error") else ""), highlight=False, markup=False)
    if sw.get("error"):
        out.print(Text(sw["error"], style="red"))
    if sw.get("device_error"):
        out.print(f"[yellow]device not read:[/yellow] {escape(sw['device_error'])}", highlight=False)
    for d in sw.get("differences") or []:           # the switch differs from what HARMLESS deployed
        out.print(f"[red]differs:[/red] {escape(d['problem'])} (fix: {escape(d['fix'])})", highlight=False)


@main.command()
@switch_option("only this deployed switch (the others are not contacted)")
@click.option("--no-device", is_flag=True, help="do not log in to the switch (no link states, no check of its config)")
@json_option("the status as one JSON object")
@handle_errors
def status(switch, no_device, as_json):
    """Port map, link state, per-port counters, controller connections, and whether each switch still has what
    HARMLESS deployed (its ports and trunks, read from the device: a reload without the migration, a port or trunk
    changed by hand, a stale watch hold), each difference with what to type. Changes nothing.

    Exit status: 0 as deployed, or nothing deployed (--json: "deployed": false); 6 an interrupted run left its journal
    (finish it with harmless down or harmless recover); 7 a switch differs from what HARMLESS deployed.
    """
    from harmless import orchestrator
    report = orchestrator.status(with_device=not no_device, **_only(switch))
    s = report.model_dump(mode="json")
    if as_json:
        click.echo(json.dumps(s))
    else:
        _print_status(s)
    if s.get("unfinished_journal"):
        sys.exit(EXIT_UNFINISHED)
    if any(sw.get("differences") for sw in s["switches"]):
        sys.exit(EXIT_DIFFERS)


def _print_status(s: dict) -> None:
    """``harmless status`` for people (``s``: the :class:`harmless.results.StatusReport` dump)."""
    if s.get("unfinished_journal"):
        err.print(f"[yellow]warning:[/yellow] {escape(s['unfinished_journal'])} (fix: harmless recover, or harmless "
                  "down)")
    if not s["deployed"]:
        out.print("nothing deployed (harmless up -i INVENTORY)")
        return
    for sw in s["switches"]:
        _print_status_switch(sw)
    if s.get("ha"):                              # an active/standby pair: roles, the peer, the last failover
        from harmless.ha.cli import print_pair
        print_pair(s["ha"])


@main.command()
@click.option("--interval", default=1.0, show_default=True, type=float, envvar="HARMLESS_WATCH_INTERVAL",
              help="seconds between polls of the switches' link states (0.5 or more)")
@click.option("--once", is_flag=True, help="poll once, mirror what changed, exit")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per line for each change")
@click.option("--syslog", default=None, metavar="HOST:PORT", envvar="HARMLESS_WATCH_SYSLOG",
              help="also listen for the switches' syslog (UDP): a link-change message polls that switch at once")
@click.option("--check-interval", default=30.0, show_default=True, type=click.FloatRange(min=0), metavar="S",
              envvar="HARMLESS_WATCH_CHECK_INTERVAL",
              help="every S seconds also compare each switch's config with what HARMLESS deployed (0: never)")
@click.option("--no-port-mod", is_flag=True, envvar="HARMLESS_WATCH_NO_PORT_MOD",
              help="do not carry out controllers' port-mods (OFPPC_PORT_DOWN); link mirroring only")
@click.option("--device-hold", default=5.0, show_default=True, type=click.FloatRange(min=0),
              envvar="HARMLESS_WATCH_DEVICE_HOLD", metavar="SECONDS",
              help="shut a legacy port only when the controller still holds it down after this long (a shorter "
                   "port-down is a flap, carried out on br-of only)")
@handle_errors
def watch(interval, once, as_json, syslog, check_interval, no_port_mod, device_hold):
    """Mirror legacy link state to br-of, and carry out controllers' port-downs as a hardware switch does.

    Polls every deployed switch (NAPALM get_interfaces) every --interval seconds. When a migrated port's link goes
    down (or is shut down on the device) its br-of port shows state LINK_DOWN to the controllers and passes nothing;
    when it comes back it is LIVE again. OVS sends an OpenFlow port-status each time (DELETE + ADD, the port keeps its
    number and name; see docs/link-state.md). With --syslog, a link-change syslog message from a switch polls it at
    once (the device's answer is what counts).

    A controller's port-mod with OFPPC_PORT_DOWN (which OVS ignores on br-of's patch ports) holds the br-of port down
    at once (config PORT_DOWN, state LINK_DOWN, nothing passes) and shuts the legacy port on the device, so the host
    loses its link once the port has been down for --device-hold seconds (inventory openflow.port_down: server keeps
    it on the server); clearing the bit undoes both. Runs until Ctrl-C; packaging/systemd/harmless-watch.service runs
    it as a service.

    At start and every --check-interval seconds it also checks that each switch still has what HARMLESS deployed (a
    reload without the migration, a migrated port or trunk changed by hand): a difference is logged once when it
    appears, with what to type, and once when it is gone (--json: {"event": "device-state", "status": "differs" |
    "resolved", "kind", "interface", "problem", "fix", ...}). Apart from the port-downs above, watch changes nothing
    on the switch.
    """
    _need_root()
    from harmless import linkwatch, portmod

    def show(ev, line):
        if as_json:
            click.echo(json.dumps(ev.model_dump(mode="json")), nl=True)   # the typed event (times rounded to ms)
            sys.stdout.flush()
        else:
            out.print(line)

    def link(ev):
        show(ev, f"{ev.switch} {ev.interface} (OpenFlow port {ev.ofport}): link {ev.link} "
                 f"(device: {ev.device_state}; on br-of {1000 * (ev.applied_at - ev.detected_at):.0f} ms "
                 "after the device answered)")

    def admin(ev):
        what = {("br-of", "down"): "held down on br-of (config PORT_DOWN)", ("br-of", "up"): "released on br-of",
                ("device", "down"): "legacy port shut on the device", ("device", "up"): "legacy port enabled again",
                }.get((ev.where, ev.admin), f"device left as it is ({ev.detail})")
        show(ev, f"{ev.switch} {ev.interface} (OpenFlow port {ev.ofport}): controller port-{ev.admin}: {what} "
                 f"({1000 * (ev.applied_at - ev.detected_at):.0f} ms)")

    def state(ev):
        if as_json:
            click.echo(json.dumps(ev.model_dump(mode="json")), nl=True)
            sys.stdout.flush()
        elif ev.status == "differs":
            out.print(f"[red]{escape(ev.switch)} differs:[/red] {escape(ev.problem)} (fix: {escape(ev.fix)})",
                      highlight=False)
        else:
            out.print(f"{escape(ev.switch)} as deployed again: {escape(ev.interface or 'the switch')} "
                      f"({escape(ev.expected)})", highlight=False)

    listen = linkwatch.parse_listen(syslog) if syslog else None
    portmod.watch(interval, once, on_event=link, on_admin=admin,
                  on_error=lambda m: err.print(f"[yellow]warning:[/yellow] {m}"), syslog=listen,
                  port_mod=not no_port_mod, hold_s=device_hold, check_interval=check_interval, on_state=state)


# ----------------------------------------------------------------------------- lab
def _offline_models(inventory: str | None, switch: str | None, driver: str | None,
                    configs: tuple[str, ...]) -> dict:
    """``harmless ports --config [SWITCH=]FILE``: ``{name: SwitchModel}`` of saved configs, the driver from
    ``--driver`` or from the inventory's switch SWITCH (a bare FILE is ``--switch``'s or a one-switch inventory's).

    Raises:
        InputError: no driver for a file, a switch the inventory does not have, a file that cannot be read.
    """
    from harmless import ports as ports_mod
    from harmless.errors import InputError
    from harmless.inventory import load_inventory
    inv = {sw.name: sw for sw in load_inventory(inventory).switches} if inventory else {}
    models = {}
    for name, path in split_configs(configs):
        name = name or switch or (next(iter(inv)) if len(inv) == 1 else None)
        if name is not None and inventory:
            pick_switch(list(inv), name, f"{inventory}: switches")
        drv = driver or (inv[name].driver if name in inv else None)
        if drv is None:
            raise InputError(f"--config {path}", "the switch OS of this saved config is not known",
                             "add --driver D (ios, eos, junos, procurve, netmiko_cli), or -i INVENTORY and "
                             "--config SWITCH=FILE to take it from the inventory")
        models[name or path.name] = ports_mod.offline(drv, str(path))
    return models


@main.command()
@inventory_option(False, "inventory YAML file: read its switches online (read-only); with --config the switch OS "
                         "of each SWITCH=FILE")
@switch_option("only this switch of the inventory")
@config_option("offline: a saved running config, as the device prints it (repeatable); its OS from --driver or "
               "from the inventory's switch SWITCH")
@click.option("--driver", default=None, metavar="OS",
              help="offline: the switch OS of --config (ios, eos, junos, procurve, netmiko_cli)")
@quiet_option()
@json_option("one JSON object (with several switches: {switch: object})")
@handle_errors
def ports(inventory, switch, configs, driver, quiet, as_json):
    """Show what every port of a switch is now: mode, access/native VID, allowed VIDs, LAG, voice VLAN, 802.1X,
    port security, shutdown, and the lines the model does not understand ("unparsed"). Changes nothing.

    \b
    Online:  harmless ports -i inv.yaml [--switch sw1] [--json]
    Offline: harmless ports --driver junos --config sw1.conf [--json]
             harmless ports -i inv.yaml --config sw1=sw1.conf      (the OS from the inventory)

    The JSON object is {"vtp_mode", "vlans": [every VID defined or used], "stp_mode", "ports": [{"interface",
    "mode": access|trunk|routed|dot1q-tunnel|dynamic|unknown, "access_vid", "native_vid", "allowed_vids",
    "lag", "is_lag", "mlag_peer_link", "voice_vid", "dot1x", "port_security", "shutdown", "management",
    "description", "unparsed": [lines]}]}; see docs/ports.md for how each OS's defaults are applied.
    """
    from harmless import ports as ports_mod
    from harmless.errors import InputError
    if not inventory and not configs:
        raise InputError("harmless ports", "nothing to read",
                         "give -i inv.yaml (online) or --config [SWITCH=]FILE (offline, with --driver D or -i)")
    if driver and not configs:
        raise InputError("harmless ports", "--driver is the OS of a saved config",
                         "add --config FILE, or drop --driver")
    if switch and not inventory:
        raise InputError("harmless ports", "--switch needs -i", "add -i inv.yaml or drop --switch")
    if configs:
        models = _offline_models(inventory, switch, driver, configs)
    else:
        models = ports_mod.online(inventory, switch, _progress(quiet or as_json))
    if as_json:
        if len(models) == 1:
            click.echo(json.dumps(next(iter(models.values())).to_json_dict()))
        else:
            click.echo(json.dumps({n: m.to_json_dict() for n, m in models.items()}))
        return
    for name, model in models.items():
        title, cols, rows = ports_mod.table_rows(name, model)
        print_table(title, [Col(h, free=h == "description") for h in cols], rows)
        for line in model.unparsed:                  # lines the reader could not place on a port: never dropped
            out.print(f"{name}: cannot read {line}", markup=False, highlight=False)


@main.group()
def lab():
    """The built-in lab: an emulated Cisco IOS switch (SSH on loopback) with hosts in network namespaces."""


@lab.command("up")
@click.option("--name", default="lab", show_default=True, help="lab name (1-6 lowercase letters/digits)")
@click.option("--ssh-port", default=2201, show_default=True, help="loopback SSH port of the emulated switch")
@click.option("--hosts", default="7,8,10", show_default=True, help="FastEthernet0/N ports that get a host")
@click.option("--inventory-out", type=click.Path(dir_okay=False), default=None,
              help="also write an inventory for this lab here")
@click.option("--controller", multiple=True,
              help="controller target for --inventory-out (tcp:IP:PORT, or ssl:IP:PORT with --tls-dir)")
@click.option("--tls-dir", type=click.Path(file_okay=False), default=None,
              help="for ssl: controllers: folder with switch-privkey.pem (mode 0600), switch-cert.pem and "
                   "ca-cert.pem (the CA of the controller's certificate); see docs/controllers.md")
@click.option("--server-netns", default=None,
              help="put the server end of the trunk in this network namespace (HARMLESS's OVS then runs there)")
@click.option("--reject", multiple=True, hidden=True, help="(tests) config lines the device rejects, as regexes")
@click.option("--vendor", type=click.Choice(["ios", "eos"]), default="ios", show_default=True,
              help="emulated switch OS: ios (Cisco, SSH on --ssh-port) or eos (Arista, eAPI over HTTP on --ssh-port)")
@click.option("--vtp-server", is_flag=True,
              help="ios: leave the switch in VTP server mode, the IOS default (plan/up then refuse it unless the "
                   "inventory says vtp: allow; docs/preflight.md); default: vtp mode transparent")
@click.option("--platform", type=click.Choice(["2960", "3750", "me3750"]), default="2960", show_default=True,
              help="ios: the emulated Catalyst: 2960 (dot1q-only, no Layer 2 protocol tunnelling), 3750 (tunnels "
                   "CDP, STP, VTP, LACP, PAgP, UDLD), me3750 (a 3750 Metro: LLDP too)")
@click.option("--l2pt", default="", metavar="PROTOCOLS",
              help="for --inventory-out: link-local protocols the switch tunnels for every port, e.g. lldp or "
                   "lldp,stp (docs/transparency.md; the platform must tunnel them)")
@quiet_option()
@json_option("the lab's switch, hosts and trunk as one JSON object")
@handle_errors
def lab_up_cmd(name, ssh_port, hosts, inventory_out, controller, tls_dir, server_netns, reject, vendor, vtp_server,
               platform, l2pt, quiet, as_json):
    """Start the lab: emulated switch sw1, its data plane, hosts on its access ports, trunk to this server."""
    _need_root()
    from harmless.errors import InputError
    from harmless.lab import topology
    tls = topology.lab_tls(controller, tls_dir)     # checked before anything is built
    try:
        host_ports = tuple(int(h) for h in hosts.split(","))
    except ValueError:
        raise InputError("--hosts", f"{hosts!r} is not a comma-separated list of port numbers", "e.g. 7,8,10")
    info = topology.lab_up(topology.LabSpec(name=name, ssh_port=ssh_port, hosts=host_ports, reject=tuple(reject),
                                            server_netns=server_netns, vendor=vendor,
                                            vtp_transparent=not vtp_server, platform=platform),
                           _progress(quiet or as_json))
    if inventory_out:
        import yaml
        inv = topology.inventory(info, list(controller), tls=tls)
        if l2pt:
            inv["switches"][0]["l2pt"] = [x.strip() for x in l2pt.split(",") if x.strip()]
        with open(inventory_out, "w") as f:
            yaml.safe_dump(inv, f, sort_keys=False)
    if as_json:
        click.echo(json.dumps(info))
        return
    out.print(f"[green]lab {name} is up[/green]: emulated switch sw1 ({topology.VENDORS[vendor]['model']}) on "
              f"127.0.0.1:{ssh_port} (user admin, password in {info['password_file']})")
    for n, h in info["hosts"].items():
        out.print(f"  host {h['netns']}: {h['ip']} on {h['interface']} (VLAN 100)")
    out.print(f"  trunk {info['trunk_port']} is cabled to {info['trunk_interface']} on this server")


@lab.command("down")
@click.option("--name", default="lab", show_default=True, help="lab name")
@json_option('{"name", "removed"} as one JSON object')
@handle_errors
def lab_down_cmd(name, as_json):
    """Stop the lab and remove its namespaces, interfaces and files (and the --server-netns namespace when lab up
    created it). A lab that is not running: says so, exit 0."""
    _need_root()
    from harmless.lab import topology
    found = topology.lab_down(name, _progress(False))
    if as_json:
        click.echo(json.dumps({"name": name, "removed": bool(found)}))
    else:
        out.print(f"lab {name} " + ("removed" if found else "was not running"))


# ----------------------------------------------------------------------------- demo
@main.command()
@click.option("--pings", default=3, show_default=True, help="pings per host pair")
@quiet_option()
@json_option("the summary as one JSON object (last line)")
@handle_errors
def demo(pings, quiet, as_json):
    """Everything on the built-in lab: lab up, plan, up with the bundled controller, pings through the hairpin,
    counters, down (the switch config is restored and checked), lab down."""
    _need_root()
    from harmless.demo import run_demo
    s = run_demo(_progress(quiet), pings=pings)
    if as_json:
        click.echo(json.dumps(s))
    else:
        print_table("HARMLESS demo summary", [Col("check", free=True), Col("result", free=True)], [
            ["ping loss before HARMLESS (VLAN 100, direct)", f"{s['ping_loss_before_pct']:.0f}%"],
            ["plan", ", ".join(f"{p['interface']}→OF {p['ofport']}/VID {p['vid']}" for p in s["plan"])],
            ["ping loss through the hairpin (all pairs)", f"{s['ping_loss_pct']:.0f}%"],
            ["packets hairpinned through br-otc", str(s["hairpinned_packets"])],
            ["br-of per-port rx/tx", ", ".join(f"{p['ofport']}: {p['rx_packets']}/{p['tx_packets']}"
                                               for p in s["ports"])],
            ["trace legacy port → other port", s["trace_datapath_actions"]],
            ["switch config restored by down", "yes" if s["config_restored"] else "NO"],
            ["ping loss after down (direct again)", f"{s['ping_loss_after_down_pct']:.0f}%"]])
        out.print(("[green]demo OK[/green]" if s["ok"] else "[red]demo FAILED[/red]") + f" in {s['seconds']} s")
    if not s["ok"]:
        sys.exit(EXIT_FAILURE)


def _register_components():
    """Commands of the other components: cost planning (harmless.cost), benchmarks (harmless.bench), OSHI
    (harmless.oshi)."""
    from harmless.bench.cli import bench
    from harmless.cost.cli import capex
    from harmless.oshi.cli import oshi
    from harmless.ops_cli import exporter, restore
    main.add_command(restore)
    main.add_command(exporter)
    main.add_command(capex)
    main.add_command(bench)
    main.add_command(oshi)
    from harmless.overlay.cli import overlay  # edge overlay (Kawashima & Matsuo), docs/edge-overlay.md
    main.add_command(overlay)
    from harmless.qos.cli import qos
    main.add_command(qos)
    from harmless.ha.cli import failover, ha   # active/standby servers (docs/high-availability.md)
    main.add_command(ha)
    main.add_command(failover)


if __name__ == "__main__":
    # ``python -m harmless.cli``: run the importable module's group, so that sub-command modules importing
    # harmless.cli share it (registering here too would import them against a second, half-built copy)
    from harmless.cli import main as _main
    _main()
else:
    _register_components()
