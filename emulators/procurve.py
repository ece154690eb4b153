"""A tiny emulated HPE ProCurve / Aruba-OS switch CLI over SSH, enough for netmiko ``hp_procurve``.

Run as ``python -m harmless.emulators.procurve --listen-port 2301 --password-file F [--hostname sw2]
[--ports 28] [--startup-config F] [--reject REGEX ...] [--log-file F]``; prints ``ready`` once SSH listens.

What it emulates (ProCurve 16.x behaviour, VLAN-centric): login banner with "Press any key to continue", a
manager session (``#`` prompt), ``terminal width``, ``no page``, ``show running-config`` (VLAN blocks with
``untagged``/``tagged``/``no untagged`` port lists), ``configure [terminal]``, ``vlan N`` context with
``name``, ``[no] untagged LIST``, ``[no] tagged LIST``, ``no vlan N``, ``exit``/``end``, ``write memory``,
``logout`` with its "Do you want to log out" question. ``untagged P`` moves P out of its previous untagged
VLAN (a port is untagged in at most one VLAN); ``no vlan N`` returns its untagged ports to VLAN 1; VLAN 1
cannot be deleted. A line that matches ``--reject`` answers ``Invalid input: ...`` and changes nothing.
The SSH transport is fake-switches' (Twisted conch), with this module as its "switch core".
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path

from harmless.switch_drivers.procurve.parse import format_ports, parse_ports

log = logging.getLogger("harmless.emulators.procurve")


class ProcurveState:
    """The switch's VLAN table: ``vlans {vid: name}``, ``untagged {port: vid}``, ``tagged {vid: set(port)}``."""

    def __init__(self, hostname: str, ports: int):
        self.hostname = hostname
        self.ports = [str(i) for i in range(1, ports + 1)]
        self.vlans: dict[int, str] = {1: "DEFAULT_VLAN"}
        self.untagged: dict[str, int] = {p: 1 for p in self.ports}
        self.tagged: dict[int, set[str]] = {}
        self.reject: list[re.Pattern] = []

    def running_config(self) -> str:
        """``show running-config`` text (header included)."""

        out = ["Running configuration:", "", "; J9727A Configuration Editor; Created on release #WB.16.10.0009",
               "", f'hostname "{self.hostname}"']
        for vid in sorted(self.vlans):
            out += [f"vlan {vid}", f'   name "{self.vlans[vid]}"']
            members = [p for p in self.ports if self.untagged.get(p) == vid]
            if vid == 1:
                nonmembers = [p for p in self.ports if self.untagged.get(p) != 1]
                if nonmembers:
                    out.append(f"   no untagged {format_ports(nonmembers)}")
            if members:
                out.append(f"   untagged {format_ports(members)}")
            if self.tagged.get(vid):
                out.append(f"   tagged {format_ports(self.tagged[vid])}")
            out.append("   exit")
        return "\n".join(out) + "\n"


class Session:
    """One SSH session: ``receive(line)`` → writes output and the next prompt; False ends the session."""

    def __init__(self, state: ProcurveState, terminal):
        self.state, self.term = state, terminal
        self.context: str | int | None = None        # None exec, "config", or a VID
        self.stage = "banner"
        # fake-switches' SSH shell walks command_processor.sub_processor and reads replace_input
        self.command_processor = self
        self.sub_processor = None
        self.replace_input = False
        self.write("HP J9727A 2920-24G-PoE+ Switch\r\nSoftware revision WB.16.10.0009\r\n\r\n"
                   "(C) Copyright 2020 Hewlett Packard Enterprise Development LP\r\n\r\nPress any key to continue\r\n")

    def write(self, text: str) -> None:
        self.term.write(text.replace("\r\n", "\n").replace("\n", "\r\n") if "\r" not in text else text)

    def prompt(self) -> str:
        h = self.state.hostname
        if self.context is None:
            return f"{h}# "
        return f"{h}(config)# " if self.context == "config" else f"{h}(vlan-{self.context})# "

    def receive(self, line: str) -> bool:
        if self.stage == "banner":
            self.stage = "cli"
            self.write(self.prompt())
            return True
        if self.stage == "logout":
            if line.strip().lower().startswith("y"):
                return False
            self.stage = "cli"
            self.write(self.prompt())
            return True
        out = self.execute(line.strip())
        if out is None:                      # waiting for the answer to a question
            return True
        self.write((out + "\n" if out else "") + self.prompt())
        return True

    # ------------------------------------------------------------------ commands
    def execute(self, line: str):

        st = self.state
        if not line:
            return ""
        if any(p.search(line) for p in st.reject):
            log.info("rejected by fault injection: %s", line)
            return f"Invalid input: {line.split()[-1]}"
        w = line.split()
        try:
            if line in ("no page", "enable") or w[0] == "terminal":
                return ""
            if w[0] == "show" and len(w) >= 2 and "running-config".startswith(w[1]):
                return st.running_config()
            if w[0] == "write" and len(w) > 1 and "memory".startswith(w[1]):
                return ""
            if w[0] == "logout":
                self.stage = "logout"
                self.write("Do you want to log out [y/n]? ")
                return None
            if w[0] in ("configure", "config") and self.context is None:
                self.context = "config"
                return ""
            if line == "end":
                self.context = None
                return ""
            if line == "exit":
                self.context = None if self.context == "config" else ("config" if self.context else None)
                return ""
            if self.context is None:
                return f"Invalid input: {w[0]}"
            if w[0] == "vlan" and len(w) == 2:
                vid = int(w[1])
                if not 1 <= vid <= 4094:
                    return f"Invalid input: {w[1]}"
                st.vlans.setdefault(vid, f"VLAN{vid}")
                self.context = vid
                return ""
            if w[:2] == ["no", "vlan"] and len(w) == 3:
                vid = int(w[2])
                if vid == 1:
                    return "The default VLAN cannot be deleted."
                st.vlans.pop(vid, None)
                st.tagged.pop(vid, None)
                for p, v in st.untagged.items():
                    if v == vid:
                        st.untagged[p] = 1
                self.context = "config"
                return ""
            if w[0] == "hostname" and len(w) == 2:
                st.hostname = w[1].strip('"')
                return ""
            if isinstance(self.context, int):
                vid = self.context
                if w[0] == "name" and len(w) >= 2:
                    st.vlans[vid] = line.split(None, 1)[1].strip('"')[:32]
                    return ""
                neg = w[0] == "no"
                word, spec = (w[1], w[2]) if neg and len(w) == 3 else (w[0], w[1] if len(w) == 2 else "")
                if word in ("untagged", "tagged") and spec:
                    ports = parse_ports(spec)
                    unknown = [p for p in ports if p not in st.ports]
                    if unknown:
                        return f"Invalid input: {unknown[0]}"
                    for p in ports:
                        if word == "tagged":
                            (st.tagged.setdefault(vid, set()).discard if neg else st.tagged.setdefault(vid, set()).add)(p)
                        elif neg:
                            if st.untagged.get(p) == vid:
                                del st.untagged[p]
                        else:
                            st.untagged[p] = vid
                    return ""
            return f"Invalid input: {w[0]}"
        except ValueError:
            return f"Invalid input: {line}"


class ProcurveCore:
    """The "switch core" fake-switches' SSH transport expects: ``launch`` a session per connection."""

    def __init__(self, state: ProcurveState):
        self.state = state
        self.switch_configuration = type("Name", (), {"name": state.hostname})()   # for the transport's log line

    def launch(self, protocol, terminal_controller):
        return _Adapter(Session(self.state, terminal_controller))

    def get_netconf_protocol(self):
        return None


class _Adapter:
    """Bridges fake-switches' shell (``receive``/``command_processor``) to :class:`Session` (no extra prompt)."""

    def __init__(self, session: Session):
        self.session = session
        self.command_processor = session

    def receive(self, line: str) -> bool:
        if self.session.stage == "logout" and not line.strip():
            return True
        return self.session.receive(line)


def main(argv: list[str] | None = None) -> int:
    """Run until SIGTERM. Exit status 2 on bad arguments or a rejected startup config."""
    p = argparse.ArgumentParser(prog="python -m harmless.emulators.procurve", description=__doc__.splitlines()[0])
    p.add_argument("--hostname", default="sw2")
    p.add_argument("--listen-host", default="127.0.0.1")
    p.add_argument("--listen-port", type=int, required=True)
    p.add_argument("--username", default="manager")
    p.add_argument("--password-file", type=Path, required=True)
    p.add_argument("--ports", type=int, default=28)
    p.add_argument("--startup-config", type=Path, help="CLI lines run in config context at start")
    p.add_argument("--reject", action="append", default=[], metavar="REGEX")
    p.add_argument("--log-file", type=Path)
    args = p.parse_args(argv)
    try:
        password = args.password_file.read_text().splitlines()[0]
    except (OSError, IndexError):
        print(f"procurve: cannot read a password from {args.password_file}", file=sys.stderr)
        return 2
    logging.basicConfig(filename=args.log_file, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("twisted").setLevel(logging.WARNING)
    state = ProcurveState(args.hostname, args.ports)
    if args.startup_config:
        sess = Session(state, type("T", (), {"write": lambda self, t: None})())
        sess.stage, sess.context = "cli", "config"
        for line in args.startup_config.read_text().splitlines():
            out = sess.execute(line.strip())
            if out:
                print(f"procurve: startup config line {line.strip()!r}: {out}", file=sys.stderr)
                return 2
            if sess.context is None:
                sess.context = "config"
    state.reject = [re.compile(r) for r in args.reject]
    from fake_switches.transports.ssh_service import SwitchSshService
    from twisted.internet import reactor

    SwitchSshService(args.listen_host, port=args.listen_port, switch_core=ProcurveCore(state),
                     users={args.username: password.encode()}).hook_to_reactor(reactor)
    log.info("ready: %s listening on %s:%s", args.hostname, args.listen_host, args.listen_port)
    print("ready", flush=True)
    reactor.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
