"""``harmless restore`` and ``harmless exporter``: the commands behind the systemd units (docs/operations.md).

Both write their log lines to stderr without colours or timestamps (journald adds those); a line about one switch
starts with ``<switch>:``.
"""
from __future__ import annotations

import json
import logging
import signal
import sys
import threading

import click

from harmless.clikit import dry_run_option, handle_errors, json_option, need_root, out, quiet_option
from harmless.exporter import DEFAULT_DEVICE_INTERVAL, DEFAULT_LISTEN
from harmless.restore import CONTROLLER_WAIT_S


def _journal_line(msg: str) -> None:
    """One plain log line on stderr (the unit's journal)."""
    print(msg, file=sys.stderr, flush=True)


@click.command()
@click.option("--wait-controller", default=CONTROLLER_WAIT_S, show_default=True, type=click.FloatRange(min=0), metavar="S",
              help="wait up to S seconds for the controllers to reconnect before reporting them (never fails)")
@dry_run_option("report what is missing (bridges, translator flows), change nothing")
@quiet_option()
@json_option()
@handle_errors
def restore(wait_controller, dry_run, quiet, as_json):
    """Rebuild the server side of the deployment from the state, without contacting any switch.

    Starts HARMLESS's own Open vSwitch if it runs a private one, then rebuilds br-otc and every br-of (ports with
    their OpenFlow port numbers, controllers, link-down placeholders of ports `watch` holds down) and the translator
    flows, exactly as `harmless up` builds them, and verifies the result. Run at boot by harmless-restore.service
    (after Open vSwitch), and by hand after an ovs-vswitchd restart (OpenFlow flows do not survive one).

    An interrupted up/down/recover is reported and nothing is changed (exit 1): finishing it restores switch
    configs, which is `harmless recover` or `harmless down`, run by an operator. An interrupted restore is simply
    run again. Nothing deployed: says so, exit 0.
    """
    need_root()
    from harmless.restore import restore as do_restore
    r = do_restore((lambda _m: None) if quiet else _journal_line, wait_controller=wait_controller, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(r.model_dump(mode="json")))
    elif r.restored:
        out.print(f"restored {len(r.switches)} switch(es) in {r.seconds} s", highlight=False)


@click.command()
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, metavar="HOST:PORT",
              envvar="HARMLESS_EXPORTER_LISTEN",
              help="address of the HTTP server (/metrics); 0.0.0.0:9478 to let a remote Prometheus scrape it")
@click.option("--device-interval", default=DEFAULT_DEVICE_INTERVAL, show_default=True, type=click.FloatRange(min=0), metavar="S",
              envvar="HARMLESS_EXPORTER_DEVICE_INTERVAL",
              help="seconds between device polls (link states and counters of the legacy switches); 0: never")
@handle_errors
def exporter(listen, device_interval):
    """Serve Prometheus metrics: per port, switch and server (runs until SIGTERM/Ctrl-C).

    Per migrated port: rx/tx packets, bytes and drops on br-of and (polled) on the device, link state on both sides,
    whether `watch` holds it down. Per switch: controllers connected and their role, translator flows present vs
    expected, the last up/down result and time, an unfinished journal. Per server: PMD busy % with OVS-DPDK. The
    metric list is in docs/operations.md; packaging/grafana/harmless.json is a dashboard for them.
    Reads only: it never takes the state lock and never changes anything; device sessions are read-only.
    """
    from harmless.exporter import parse_listen, serve
    addr = parse_listen(listen)
    logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    for noisy in ("paramiko", "netmiko", "napalm", "harmless.switch_drivers"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_a: stop.set())
    serve(addr, device_interval, stop)
