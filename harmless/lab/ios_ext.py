"""Cisco IOS extension for fake-switches 1.5.0: what netmiko and NAPALM ``ios`` need.

Stock fake-switches cannot take a NAPALM merge/replace (no flash, ``tclsh``, ``copy``, ``configure
replace``, ``show archive``) and has bugs that kill sessions (``show ip interface brief``; no ``end``).
:func:`install` monkey-patches the Cisco command processors once per process:

config mode
    ``end``; ``file prompt quiet`` (no-op); the :func:`set_reject_patterns` fault-injection hook
    (a matching line answers ``% Invalid input detected at '^' marker.`` and changes nothing).
enable mode
    ``show ip interface brief``, ``show interfaces [IF] [switchport]``, ``show hosts``,
    ``show archive`` ("Archive feature not enabled": no commit-confirm),
    ``show archive config incremental-diffs FILE``, ``show archive config differences A FILE``,
    ``dir``, ``verify /md5``, ``more``, ``copy running-config flash:F``, ``copy flash:F running-config``,
    ``copy null: flash:F``, ``copy running-config startup-config``, ``configure replace flash:F [...]``,
    ``tclsh`` (the ``puts [open "flash:F" w+] {...}`` form netmiko's InLineTransfer writes), and
    a running config with VLANs in numeric order (as IOS prints them) built in one place.
enable password
    only the configured enable secret enters enable mode (stock also accepted an empty one).

Flash is an in-memory dict per switch (``switch_configuration._flash``). ``configure replace`` resets
the configuration and replays the file, so the running config text afterwards equals the file's
(a ``copy running-config flash:F`` then ``configure replace flash:F`` round-trips byte for byte).
"""
from __future__ import annotations

import hashlib
import logging
import re

from fake_switches.cisco.command_processor import enabled as _enabled
from fake_switches.cisco.command_processor.config import ConfigCommandProcessor
from fake_switches.cisco.command_processor.default import DefaultCommandProcessor
from fake_switches.cisco.command_processor.enabled import EnabledCommandProcessor
from fake_switches.command_processing.base_command_processor import BaseCommandProcessor
from fake_switches.command_processing.piping_processor_base import NotPipingProcessor
from fake_switches.switch_configuration import AggregatedPort, VlanPort, split_port_name
from fake_switches.terminal import NoopTerminalController

log = logging.getLogger(__name__)

FLASH_SIZE = 32514048
INVALID_INPUT = "% Invalid input detected at '^' marker."
_state = {"installed": False, "reject": []}


# ----------------------------------------------------------------------------- helpers
def flash(sc) -> dict[str, str]:
    """The emulated flash of one switch: ``{file name: text}``."""
    if not hasattr(sc, "_flash"):
        sc._flash = {}
    return sc._flash


def _fname(path: str) -> str:
    """``'flash:/x.txt'``, ``'flash:x.txt'`` → ``'x.txt'``; ``'flash:'`` → ``''``."""
    p = path.split(":", 1)[1] if ":" in path else path
    return p.lstrip("/")


def _short(name: str) -> str:
    n, num = split_port_name(name)
    return n[:2] + num


def running_config_lines(sc) -> list[str]:
    """The running config as IOS prints it after the ``Current configuration`` header.

    Args:
        sc: fake_switches SwitchConfiguration.

    Returns:
        Lines ``version``, ``hostname``, VLANs in numeric order, physical then SVI interfaces,
        static routes, ``end``, and a final ``""``.
    """
    lines = ["version 12.1", "!", "hostname %s" % sc.name, "!", "!"]
    for vlan in sorted(sc.vlans, key=lambda v: v.number):
        lines += _enabled.build_running_vlan(vlan) + ["!"]
    for port in sc.get_physical_ports() + sc.get_vlan_ports():
        lines += _enabled.build_running_interface(port) + ["!"]
    if sc.static_routes:
        lines += [_enabled.build_static_routes(r) for r in sc.static_routes] + ["!"]
    return lines + ["end", ""]


def running_config_text(sc) -> str:
    """:func:`running_config_lines` joined with newlines."""
    return "\n".join(running_config_lines(sc))


def _show_run(self):
    data = running_config_lines(self.switch_configuration)
    self.write_line("Building configuration...")
    self.write_line("")
    self.write_line("Current configuration : %i bytes" % (len("\n".join(data)) + 1))
    for line in data:
        self.write_line(line)


class _Line(str):
    """Config line that keeps its text but compares case- and space-insensitively."""

    def __new__(cls, raw):
        o = str.__new__(cls, " ".join(raw.split()).lower())
        o.text = " ".join(raw.split())
        return o


def _blocks(text: str) -> dict:
    """IOS config → ordered ``{parent line: [child lines]}`` (one level: VLANs, interfaces)."""
    res, cur = {}, None
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!") or s == "end":
            continue
        line = _Line(raw)
        if raw[0] in " \t" and cur is not None:
            res[cur].append(line)
        else:
            cur = line
            res.setdefault(cur, [])
    return res


def set_reject_patterns(patterns: list[str]) -> None:
    """Fault injection: config lines matching any of ``patterns`` (``re.search`` on the stripped line)
    are rejected with IOS's ``% Invalid input detected`` and change nothing."""
    _state["reject"] = [re.compile(p) for p in patterns]


def _is_rejected(line: str) -> bool:
    s = line.strip()
    return bool(s) and any(p.search(s) for p in _state["reject"])


def apply_config_text(processor, text: str) -> list[str]:
    """Feed IOS config lines through ``processor``'s config-mode processor (like ``copy F running-config``).

    Un-indented lines leave any sub-mode first (as in a config file), so ``ip route`` after an
    ``interface`` block is a global command. ``version``/``hostname``/``end``/``!`` lines are skipped.

    Args:
        processor: an EnabledCommandProcessor (already ``init``-ed with a switch configuration).
        text: configuration text.

    Returns:
        The rejected lines (stripped), in order; empty when everything was accepted.
    """
    sc = processor.switch_configuration
    cp = processor.config_processor
    cp.init(sc, NoopTerminalController(), processor.logger, NotPipingProcessor())
    bad = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("!") or s == "end" or s.split()[0] in ("version", "hostname", "Building", "Current"):
            continue
        if line[0] not in " \t":
            cp.sub_processor = None
        cp._rejected = False
        if not cp.process_command(line) or cp._rejected:
            bad.append(s)
    cp.sub_processor = None
    return bad


def _reset_config(sc) -> None:
    for p in list(sc.ports):
        if isinstance(p, (VlanPort, AggregatedPort)):
            sc.remove_port(p)
        else:
            p.reset()
    for v in list(sc.vlans):
        if v.number == 1:
            v.name = None
        else:
            sc.remove_vlan(v)
    sc.static_routes = []


def _invalid(self, line: str) -> None:
    self.write_line(line.strip())
    self.write_line("   ^")
    self.write_line(INVALID_INPUT)
    self.write_line("")


# ----------------------------------------------------------------------------- TCL mode
class TclCommandProcessor(BaseCommandProcessor):
    """IOS ``tclsh``: ``puts [open "flash:F" w+] {...}`` writes F; other lines run as exec commands;
    ``tclquit`` leaves."""

    PUTS = re.compile(r'^\s*puts\s+\[open\s+"([^"]+)"\s+w\+?\]\s+\{(.*)$')

    def __init__(self, exec_processor):
        super().__init__()
        self.exec_processor = exec_processor

    def init(self, *args):
        super().init(*args)
        self._target, self._buf = None, None

    def get_prompt(self):
        return self.switch_configuration.name + "(tcl)#"

    def process_command(self, line):
        if self._target is not None:                  # inside puts {...}
            if line.rstrip().endswith("}"):
                self._buf.append(line.rstrip()[:-1])
                flash(self.switch_configuration)[_fname(self._target)] = "\n".join(self._buf) + "\n"
                self._target, self._buf = None, None
                self.show_prompt()
            else:
                self._buf.append(line)
            return True
        m = self.PUTS.match(line)
        if m:
            target, first = m.group(1), m.group(2)
            if first.rstrip().endswith("}"):
                flash(self.switch_configuration)[_fname(target)] = first.rstrip()[:-1] + "\n"
                self.show_prompt()
            else:
                self._target, self._buf = target, [first]
            return True
        if line.strip() in ("tclquit", "exit"):
            self.is_done = True
            return True
        if line.strip() and not self.exec_processor.parse_and_execute_command(line):
            self.write_line('invalid command name "%s"' % line.strip().split()[0])
        self.show_prompt()
        return True


# ----------------------------------------------------------------------------- enable-mode commands
_orig = {
    "do_show": EnabledCommandProcessor.do_show,
    "do_copy": EnabledCommandProcessor.do_copy,
    "do_configure": EnabledCommandProcessor.do_configure,
    "cfg_process_command": ConfigCommandProcessor.process_command,
}


def _ports(sc):
    return sc.get_physical_ports() + sc.get_vlan_ports()


#: physical interfaces whose link (carrier) is down, mirrored from the lab's data plane by the fakeswitch
_OPER_DOWN: set[str] = set()


def set_oper_down(names: set[str]) -> None:
    """Set the interfaces whose link is down (``show interfaces``: ``is down, line protocol is down``)."""
    global _OPER_DOWN
    if names != _OPER_DOWN:
        log.info("link state: down %s", sorted(names))
    _OPER_DOWN = set(names)


def _status(p) -> tuple[str, str]:
    """(status, line protocol) of a port as IOS prints them."""
    if p.shutdown:
        return "administratively down", "down"
    if p.name in _OPER_DOWN:
        return "down", "down"
    return "up", "up"


def _show_ip_int_brief(self):
    self.write_line("Interface              IP-Address      OK? Method Status                Protocol")
    for p in _ports(self.switch_configuration):
        ip = str(p.ips[0].ip) if isinstance(p, VlanPort) and p.ips else "unassigned"
        st, pr = _status(p)
        self.write_line("%-22s %-15s YES %-6s %-21s %s" % (p.name, ip, "NVRAM" if ip != "unassigned" else "unset", st, pr))


def _show_interfaces(self, ports):
    for i, p in enumerate(ports):
        st, pr = _status(p)
        hw = "Gigabit Ethernet" if p.name.lower().startswith("gi") else ("EtherSVI" if isinstance(p, VlanPort) else "Fast Ethernet")
        bw = 1000000 if p.name.lower().startswith("gi") else 100000
        mac = "0011.2233.%04x" % (i + 1)
        conn = "" if isinstance(p, VlanPort) else (" (notconnect)" if p.name in _OPER_DOWN else " (connected)")
        self.write_line("%s is %s, line protocol is %s%s" % (p.name, st, pr, conn))
        self.write_line("  Hardware is %s, address is %s (bia %s)" % (hw, mac, mac))
        if p.description:
            self.write_line("  Description: %s" % p.description)
        self.write_line("  MTU %s bytes, BW %s Kbit/sec, DLY 100 usec, " % (p.mtu or 1500, bw))
        self.write_line("     reliability 255/255, txload 1/255, rxload 1/255")


def _vname(sc, num):
    v = sc.get_vlan(num)
    if v is None:
        return "Inactive"
    return v.name or ("default" if num == 1 else "VLAN%04d" % num)


def _show_switchport(self, ports):
    sc = self.switch_configuration
    for p in ports:
        if isinstance(p, VlanPort):
            continue
        trunk = p.mode == "trunk"
        admin = {"trunk": "trunk", "access": "static access", "dot1q-tunnel": "dot1q-tunnel"}.get(p.mode, "dynamic auto")
        oper = "trunk" if trunk else "static access" if p.mode == "access" else "down"
        acc = p.access_vlan or 1
        nat = p.trunk_native_vlan or 1
        allowed = "ALL" if p.trunk_vlans is None else (_enabled.to_vlan_ranges(p.trunk_vlans).upper())
        for line in ("Name: %s" % _short(p.name), "Switchport: Enabled", "Administrative Mode: %s" % admin,
                     "Operational Mode: %s" % oper, "Administrative Trunking Encapsulation: dot1q",
                     "Operational Trunking Encapsulation: %s" % ("dot1q" if trunk else "native"),
                     "Negotiation of Trunking: %s" % ("On" if trunk else "Off"),
                     "Access Mode VLAN: %s (%s)" % (acc, _vname(sc, acc)),
                     "Trunking Native Mode VLAN: %s (%s)" % (nat, _vname(sc, nat)),
                     "Administrative Native VLAN tagging: enabled", "Voice VLAN: none",
                     "Trunking VLANs Enabled: %s" % allowed, "Pruning VLANs Enabled: 2-1001",
                     "Capture Mode Disabled", "Capture VLANs Allowed: ALL", "", "Protected: false",
                     "Unknown unicast blocked: disabled", "Unknown multicast blocked: disabled",
                     "Appliance trust: none", ""):
            self.write_line(line)


def _incremental_diff(running: str, merge: str) -> list[str]:
    run = _blocks(running)
    out = []
    for parent, children in _blocks(merge).items():
        missing = [c for c in children if c not in run.get(parent, [])]
        if parent not in run or missing:
            out.append(parent.text)
            out += [" " + c.text for c in missing]
    return out


def _contextual_diff(running: str, candidate: str) -> list[str]:
    run, new = _blocks(running), _blocks(candidate)
    out = []
    for parent in list(run) + [p for p in new if p not in run]:
        if parent not in new:
            out += ["-" + parent.text] + [" -" + c.text for c in run[parent]]
        elif parent not in run:
            out += ["+" + parent.text] + [" +" + c.text for c in new[parent]]
        else:
            rem = [c for c in run[parent] if c not in new[parent]]
            add = [c for c in new[parent] if c not in run[parent]]
            if rem or add:
                out += [parent.text] + [" -" + c.text for c in rem] + [" +" + c.text for c in add]
    return out


def do_show(self, *args):
    a = [x.lower() for x in args]
    sc = self.switch_configuration
    if a and "running-config".startswith(a[0]) and len(a[0]) >= 3 and len(a) == 1:
        return _show_run(self)
    if len(a) >= 3 and "ip".startswith(a[0]) and "interface".startswith(a[1]) and "brief".startswith(a[2]):
        return _show_ip_int_brief(self)
    if a and len(a[0]) >= 3 and "interfaces".startswith(a[0]):
        if len(a) >= 2 and "switchport".startswith(a[-1]) and len(a[-1]) >= 2:
            if len(a) == 2:
                return _show_switchport(self, sc.get_physical_ports())
            port = sc.get_port_by_partial_name("".join(args[1:-1]))
            return _show_switchport(self, [port] if port else [])
        if len(a) == 1:
            return _show_interfaces(self, _ports(sc))
        if re.search(r"\d", "".join(a[1:])):
            port = sc.get_port_by_partial_name("".join(args[1:]))
            return _show_interfaces(self, [port] if port else [])
        return None
    if a and "hosts".startswith(a[0]) and len(a[0]) >= 2:
        self.write_line("Default domain is not set")
        self.write_line("Name/address lookup uses static mappings")
        return None
    if a and a[0] == "archive":
        if len(a) == 1 or a[1:3] == ["config", "rollback"]:
            self.write_line("Archive feature not enabled")
            return None
        if len(a) >= 4 and a[1] == "config" and a[2].startswith("incremental"):
            merge = flash(sc).get(_fname(args[3]))
            if merge is None:
                self.write_line("%%Error opening %s (No such file or directory)" % args[3])
                return None
            lines = _incremental_diff(running_config_text(sc), merge)
            self.write_line("!List of Commands:")
            for line in lines:
                self.write_line(line)
            self.write_line("end")
            if not lines:
                self.write_line("!No changes were found")
            return None
        if len(a) >= 5 and a[1] == "config" and a[2].startswith("differences"):
            cand = flash(sc).get(_fname(args[4]))
            if cand is None:
                self.write_line("%%Error opening %s (No such file or directory)" % args[4])
                return None
            self.write_line("!Contextual Config Diffs:")
            for line in _contextual_diff(running_config_text(sc), cand):
                self.write_line(line)
            return None
    return _orig["do_show"](self, *args)


def do_dir(self, *args):
    fl = flash(self.switch_configuration)
    name = _fname(args[-1] if args else "flash:/")
    used = sum(len(v) for v in fl.values())
    if name:
        if name not in fl:
            self.write_line("%%Error opening flash:/%s (No such file or directory)" % name)
            return
        self.write_line("Directory of flash:/%s" % name)
        self.write_line("")
        self.write_line("    2  -rwx %11d  Mar 1 1993 00:00:00 +00:00  %s" % (len(fl[name]), name))
    else:
        self.write_line("Directory of flash:/")
        self.write_line("")
        for i, (n, c) in enumerate(sorted(fl.items())):
            self.write_line("%5d  -rwx %11d  Mar 1 1993 00:00:00 +00:00  %s" % (i + 2, len(c), n))
    self.write_line("")
    self.write_line("%d bytes total (%d bytes free)" % (FLASH_SIZE, FLASH_SIZE - used))


def do_verify(self, *args):
    path = args[-1]
    c = flash(self.switch_configuration).get(_fname(path))
    if c is None:
        self.write_line("%%Error opening %s (No such file or directory)" % path)
        return
    self.write_line("......Done!")
    self.write_line("verify /md5 (%s) = %s" % (path, hashlib.md5(c.encode()).hexdigest()))


def do_more(self, *args):
    c = flash(self.switch_configuration).get(_fname(args[-1]))
    if c is None:
        self.write_line("%%Error opening %s (No such file or directory)" % args[-1])
    else:
        self.write(c)


def do_copy(self, source_url, destination_url, *rest):
    sc = self.switch_configuration
    fl = flash(sc)
    src, dst = source_url.lower(), destination_url.lower()
    if src.startswith("run") and dst.startswith("flash:"):
        fl[_fname(destination_url)] = running_config_text(sc)
        self.write_line("%d bytes copied in 0.100 secs" % len(fl[_fname(destination_url)]))
    elif src.startswith("flash:") and dst.startswith("run"):
        c = fl.get(_fname(source_url))
        if c is None:
            self.write_line("%%Error opening %s (No such file or directory)" % source_url)
            return
        for bad in apply_config_text(self, c):
            _invalid(self, bad)
        self.write_line("%d bytes copied in 0.100 secs" % len(c))
    elif src.startswith("null:") and dst.startswith("flash:"):
        fl[_fname(destination_url)] = ""
    elif src.startswith("run") and dst.startswith("start"):
        self.write_line("Building configuration...")
        sc.commit()
        self.write_line("[OK]")
    else:
        return _orig["do_copy"](self, source_url, destination_url)


def do_configure(self, *args):
    if args and len(args[0]) >= 3 and "replace".startswith(args[0].lower()):
        if len(args) < 2:
            self.write_line("% Incomplete command.")
            return
        c = flash(self.switch_configuration).get(_fname(args[1]))
        if c is None:
            self.write_line("%%Error opening %s (No such file or directory)" % args[1])
            return
        _reset_config(self.switch_configuration)
        bad = apply_config_text(self, c)
        for line in bad:
            _invalid(self, line)
        self.write_line("Total number of passes: 1")
        self.write_line("Rollback Done" if not bad else "Rollback aborted: %d invalid lines" % len(bad))
        return
    return _orig["do_configure"](self, *args)


def do_tclsh(self, *args):
    self.move_to(TclCommandProcessor(self))


# ----------------------------------------------------------------------------- config mode
def cfg_process_command(self, line):
    """Config-mode entry point (sub-modes included): the ``--reject`` hook, then the stock processor."""
    if _is_rejected(line):
        self._rejected = True
        log.info("config line rejected by fault injection: %s", line.strip())
        _invalid(self, line)
        self.show_prompt()
        return True
    return _orig["cfg_process_command"](self, line)


def cfg_do_end(self, *_):
    self.is_done = True


def cfg_noop(self, *_):
    pass


def continue_enabling(self, line):
    """``enable``: only the configured secret works (stock also accepted an empty line)."""
    self.replace_input = False
    if line in self.switch_configuration.privileged_passwords or not self.switch_configuration.privileged_passwords:
        self.move_to(self.enabled_processor)
    else:
        self.write_line("% Access denied")
        self.write_line("")


def install() -> None:
    """Patch fake-switches' Cisco processors (idempotent; call before the reactor runs)."""
    if _state["installed"]:
        return
    ConfigCommandProcessor.process_command = cfg_process_command
    ConfigCommandProcessor._rejected = False
    ConfigCommandProcessor.do_end = cfg_do_end
    ConfigCommandProcessor.do_file = cfg_noop
    ConfigCommandProcessor.do_no_file = cfg_noop
    EnabledCommandProcessor.do_show = do_show
    EnabledCommandProcessor.show_run = _show_run
    EnabledCommandProcessor.do_dir = do_dir
    EnabledCommandProcessor.do_verify = do_verify
    EnabledCommandProcessor.do_more = do_more
    EnabledCommandProcessor.do_copy = do_copy
    EnabledCommandProcessor.do_configure = do_configure
    EnabledCommandProcessor.do_tclsh = do_tclsh
    DefaultCommandProcessor.continue_enabling = continue_enabling
    _state["installed"] = True
