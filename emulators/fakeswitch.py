"""The lab's legacy switch process: one emulated Cisco IOS switch (management plane, :mod:`harmless.emulators.ios`)
or, with ``--vendor eos``, one emulated Arista EOS switch (:mod:`harmless.emulators.eos`), driving an OVS bridge
(data plane, :mod:`harmless.emulators.dataplane`).

Run as ``python -m harmless.emulators.fakeswitch --hostname sw1 --listen-port 2201 --username admin
--password-file F [--startup-config F] [--ovs-db unix:SOCK --bridge br-legacy --port-map JSON]
[--sync-interval 0.3] [--platform 2960|3750|me3750] [--reject REGEX ...] [--drop-session-on REGEX ...]
[--minute-seconds S] [--log-file F] [--pid-file F] [--status-file F]``.

Management plane (IOS): fake-switches' ``cisco_2960_24TT_L`` (FastEthernet0/1-24, GigabitEthernet0/1-2) over
SSH on loopback, extended so the real NAPALM ``ios`` driver can merge, diff, commit, roll back and replace. The
password comes from a file (never argv) and is filtered out of every log line.

Data plane: every ``--sync-interval`` seconds the switch's in-memory VLAN config is mapped onto the mapped OVS
ports; when that changed since the last successful apply, the changed ports are written in ONE ``ovs-vsctl
--no-wait -- set Port ... -- set Port ...`` transaction.

Prints ``ready`` on stdout (and in the log) once it listens. Exit status 2 on bad arguments or a
rejected startup config. SIGTERM/SIGINT stop it cleanly (pid file removed).

This module only parses the command line and dispatches; it is imported by nobody, so the vendor modules never
import each other or it.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from harmless.emulators.process import Redact


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m harmless.emulators.fakeswitch``."""
    p = argparse.ArgumentParser(prog="python -m harmless.emulators.fakeswitch",
                                description="One emulated Cisco IOS switch (SSH on loopback) or Arista EOS switch "
                                            "(eAPI over HTTP on loopback) driving an OVS bridge.")
    p.add_argument("--vendor", choices=("ios", "eos"), default="ios",
                   help="ios: Cisco 2960 over SSH (NAPALM ios); eos: Arista over eAPI/HTTP (NAPALM eos, "
                        "transport http), see harmless.emulators.eos")
    p.add_argument("--hostname", default="sw1")
    p.add_argument("--listen-host", default="127.0.0.1")
    p.add_argument("--listen-port", type=int, required=True)
    p.add_argument("--username", default="admin")
    p.add_argument("--password-file", required=True, type=Path,
                   help="file holding the SSH password (also the enable secret); first line is used")
    p.add_argument("--startup-config", type=Path, help="IOS config applied at start through the config processor")
    p.add_argument("--ovs-db", help="OVSDB remote of the lab data plane, e.g. unix:/run/lab/db.sock")
    p.add_argument("--bridge", default="br-legacy", help="OVS bridge holding the mapped ports (checked at start)")
    p.add_argument("--port-map", default="{}", help='JSON {"FastEthernet0/7": "fa0-7", ...}')
    p.add_argument("--sync-interval", type=float, default=0.3)
    p.add_argument("--reject", action="append", default=[], metavar="REGEX",
                   help="test-only fault injection: reject config lines matching REGEX (repeatable)")
    p.add_argument("--drop-after", metavar="REGEX",
                   help="test-only fault injection (eos): drop the reply to the first request that ran a "
                        "command matching REGEX (a session lost mid-commit)")
    p.add_argument("--platform", choices=("2960", "3750", "me3750"), default="2960",
                   help="Catalyst behaviour: 2960 = dot1q-only (no 'switchport trunk encapsulation', no "
                        "l2protocol-tunnel); 3750 = ISL-capable (trunks need 'switchport trunk encapsulation dot1q' "
                        "first), tunnels CDP/STP/VTP/LACP/PAgP/UDLD; me3750 = a 3750 Metro: as 3750, plus LLDP")
    p.add_argument("--session-port", metavar="INTERFACE",
                   help="ios: show users / show ip arp / show mac address-table say the management session arrives "
                        "on INTERFACE (a management station behind it)")
    p.add_argument("--drop-session-on", action="append", default=[], metavar="REGEX",
                   help="test-only fault injection: run an exec command matching REGEX silently, then close "
                        "the SSH session (a session lost mid-commit)")
    p.add_argument("--fault-file", metavar="FILE",
                   help="test-only runtime fault injection (ios): JSON {reject: [REGEX], drop: [REGEX], "
                        "slow: {REGEX: seconds}}, re-read whenever it changes")
    p.add_argument("--minute-seconds", type=float, default=60.0,
                   help="test-only time scale: how many seconds one minute of the archive revert timer lasts")
    p.add_argument("--log-file", type=Path)
    p.add_argument("--pid-file", type=Path)
    p.add_argument("--status-file", type=Path, help="JSON status (listening port, OVS sync state)")
    p.add_argument("-v", "--verbose", action="store_true", help="INFO logging of fake-switches too")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the switch until SIGTERM/SIGINT. Returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        password = args.password_file.read_text().splitlines()[0]
    except (OSError, IndexError):
        print(f"fakeswitch: cannot read a password from {args.password_file}", file=sys.stderr)
        return 2
    if not password:
        print(f"fakeswitch: {args.password_file}: empty password", file=sys.stderr)
        return 2
    try:
        port_map = json.loads(args.port_map)
        assert isinstance(port_map, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in port_map.items())
    except (ValueError, AssertionError):
        print("fakeswitch: --port-map must be a JSON object {interface: ovs port}", file=sys.stderr)
        return 2

    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(Redact(password))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # fake-switches logs every received line at DEBUG (the enable secret included): never below INFO,
    # and WARNING unless -v.
    logging.getLogger("fake_switches").setLevel(logging.INFO if args.verbose else logging.WARNING)
    if args.vendor == "eos":
        from harmless.emulators import eos

        return eos.serve(args, password, port_map)
    from harmless.emulators import ios

    return ios.serve(args, password, port_map)


if __name__ == "__main__":
    sys.exit(main())
