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
    ``dir``, ``verify /md5``, ``more``, ``delete [/force] flash:F``, ``copy running-config flash:F``,
    ``copy flash:F running-config``, ``copy null: flash:F``, ``copy running-config startup-config`` /
    ``write memory``, ``copy flash:F startup-config``, ``reload`` (:func:`do_reload`), ``configure replace flash:F [...]``,
    ``tclsh`` (the ``puts [open "flash:F" w+] {...}`` form netmiko's InLineTransfer writes), and
    a running config with VLANs in numeric order (as IOS prints them) built in one place.
enable password
    only the configured enable secret enters enable mode (stock also accepted an empty one).
platform rules (:func:`set_platform`)
    ``switchport nonegotiate`` only on static ports; ``no switchport mode`` refused on such ports; 2960 has no
    ``switchport trunk encapsulation``; 3750 refuses trunk mode until encapsulation is dot1q/isl; ``show version``
    and ``show interfaces switchport`` report the platform.
configure replace
    IOS semantics (:func:`configure_replace`): per-block ``no`` forms then additions, up to 5 passes;
    ``revert trigger error`` restores the original at the first refused command (what NAPALM sends).
named ACLs
    ``ip access-list standard|extended NAME`` with ``permit``/``deny``/``remark`` entries (sequence numbers, ``no``
    forms), printed after the static routes.
archive / commit-confirm
    ``archive`` block (``path``), ``show archive``, ``show archive config rollback timer``,
    ``configure terminal revert timer N``, ``configure replace ... timer N``, ``configure confirm``,
    ``configure revert now``; an unconfirmed timer reverts by itself (clock scale: :func:`set_minute_seconds`).
session loss
    :func:`set_drop_patterns`: run a matching exec command silently, then close the SSH session.

Flash is an in-memory dict per switch (``switch_configuration._flash``). ``configure replace`` resets
the configuration and replays the file, so the running config text afterwards equals the file's
(a ``copy running-config flash:F`` then ``configure replace flash:F`` round-trips byte for byte).
"""
from __future__ import annotations

import hashlib
import logging
import os
import re

from fake_switches.cisco.command_processor import enabled as _enabled
from fake_switches.cisco.command_processor.config import ConfigCommandProcessor
from fake_switches.cisco.command_processor.config_interface import ConfigInterfaceCommandProcessor
from fake_switches.cisco.command_processor.default import DefaultCommandProcessor
from fake_switches.cisco.command_processor.enabled import EnabledCommandProcessor
from fake_switches.command_processing.base_command_processor import BaseCommandProcessor
from fake_switches.command_processing.piping_processor_base import NotPipingProcessor
from fake_switches.switch_configuration import AggregatedPort, VlanPort, split_port_name
from fake_switches.terminal import NoopTerminalController

from harmless.emulators.dataplane import OvsSync, list_ports
from harmless.emulators.process import run_reactor, write_json
from harmless.switch_drivers.ios.vids import format_vid_ranges

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
        Lines ``version``, ``hostname``, ``vtp`` (transparent/off only) and ``spanning-tree`` lines, VLANs in
        numeric order (VTP transparent/off only: a server or client keeps them in vlan.dat), port-channel, physical
        then SVI interfaces, static routes, ``end``, and a final ``""``.
    """
    lines = ["version 12.1", "!", "hostname %s" % sc.name, "!", "!"] + _global_lines(sc)
    if vlans_in_running_config(sc):                   # VTP server/client: VLANs live in vlan.dat only
        for vlan in sorted(sc.vlans, key=lambda v: v.number):
            lines += _enabled.build_running_vlan(vlan) + ["!"]
    for port in aggregated_ports(sc) + sc.get_physical_ports() + sc.get_vlan_ports():
        lines += _interface_lines(port) + ["!"]
    arch = archive_settings(sc)
    if arch:
        lines += ["archive"] + [" %s" % x for x in arch] + ["!"]
    if sc.static_routes:
        lines += [_enabled.build_static_routes(r) for r in sc.static_routes] + ["!"]
    if acls(sc):
        lines += acl_lines(sc) + ["!"]
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
    ``interface`` block is a global command. ``version``/``end``/``!`` lines are skipped; ``hostname``
    sets the name.

    Args:
        processor: an EnabledCommandProcessor (already ``init``-ed with a switch configuration).
        text: configuration text.

    Returns:
        The rejected lines (stripped), in order; empty when everything was accepted. IOS goes on after
        a rejected line; so does this. See :func:`apply_config_detailed` for the device's messages.
    """
    return [line for line, _msg in apply_config_detailed(processor, text)]


def _reset_config(sc) -> None:
    """Forget the running config (not vlan.dat: on a VTP server/client the VLANs and the VTP state stay)."""
    for p in list(sc.ports):
        if isinstance(p, (VlanPort, AggregatedPort)):
            sc.remove_port(p)
        else:
            p.reset()
    sc._stp_mode = "pvst"
    for v in list(sc.vlans):
        if not vlans_in_running_config(sc):
            continue
        if v.number == 1:
            v.name = None
        else:
            sc.remove_vlan(v)
    sc.static_routes = []
    archive_settings(sc).clear()
    no_learning_vlans(sc).clear()
    acls(sc).clear()


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
    "enabled_process_command": EnabledCommandProcessor.process_command,
    "if_do_switchport": ConfigInterfaceCommandProcessor.do_switchport,
    "if_do_no_switchport": ConfigInterfaceCommandProcessor.do_no_switchport,
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
        oper = {"trunk": "trunk", "access": "static access", "dot1q-tunnel": "tunnel"}.get(p.mode, "static access")
        encap = p.trunk_encapsulation_mode or ("negotiate" if isl_capable(sc) else "dot1q")
        acc = p.access_vlan or 1
        nat = p.trunk_native_vlan or 1
        allowed = "ALL" if p.trunk_vlans is None else (_enabled.to_vlan_ranges(p.trunk_vlans).upper())
        for line in ("Name: %s" % _short(p.name), "Switchport: Enabled", "Administrative Mode: %s" % admin,
                     "Operational Mode: %s" % oper, "Administrative Trunking Encapsulation: %s" % encap,
                     "Operational Trunking Encapsulation: %s" % ("dot1q" if trunk else "native"),
                     "Negotiation of Trunking: %s" % ("Off" if _nonegotiate(p) or p.mode in ("access", "dot1q-tunnel")
                                                      else "On"),
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
    if len(a) >= 3 and "running-config".startswith(a[0]) and len(a[0]) >= 3 and "interface".startswith(a[1]):
        port = sc.get_port_by_partial_name("".join(args[2:]))
        if port is None:
            return _invalid(self, " ".join(args))
        lines = ["!"] + _interface_lines(port) + ["end"]
        self.write_line("Building configuration...")
        self.write_line("")
        self.write_line("Current configuration : %i bytes" % (len("\n".join(lines[1:-1])) + 1))
        for line in lines:
            self.write_line(line)
        return None
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
    if a and len(a[0]) >= 3 and "version".startswith(a[0]):
        return _show_version(self)
    if a and a[0] == "archive":
        if len(a) == 1:
            return _show_archive(self)
        if a[1:3] == ["config", "rollback"]:
            return _show_rollback_timer(self)
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


def do_delete(self, *args):
    """``delete [/force] [/recursive] flash:F`` (IOS Configuration Fundamentals Command Reference, "delete"; this
    emulator never asks the two confirmations, as ``/force`` or ``file prompt quiet`` make IOS do)."""
    paths = [a for a in args if not a.startswith("/")]
    if not paths:
        self.write_line("% Incomplete command.")
        return
    fl, name = flash(self.switch_configuration), _fname(paths[-1])
    if name not in fl:
        self.write_line("%%Error deleting flash:/%s (No such file or directory)" % name)
        return
    del fl[name]


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
        for bad, message in apply_config_detailed(self, c):
            if message == INVALID_INPUT:
                _invalid(self, bad)
            else:                                   # IOS prints "Command rejected: ..." without the line
                self.write_line(message)
        self.write_line("%d bytes copied in 0.100 secs" % len(c))
    elif src.startswith("null:") and dst.startswith("flash:"):
        fl[_fname(destination_url)] = ""
    elif src.startswith("run") and dst.startswith("start"):
        self.write_line("Building configuration...")
        sc.commit()
        sc._startup = running_config_text(sc)
        self.write_line("[OK]")
    elif src.startswith("flash:") and dst.startswith("start"):
        c = fl.get(_fname(source_url))
        if c is None:
            self.write_line("%%Error opening %s (No such file or directory)" % source_url)
            return
        sc._startup = c
        self.write_line("%d bytes copied in 0.100 secs" % len(c))
    else:
        return _orig["do_copy"](self, source_url, destination_url)


def do_write(self, *args):
    """``write [memory]``: the running config becomes the startup config."""
    sc = self.switch_configuration
    self.write_line("Building configuration...")
    sc.commit()
    sc._startup = running_config_text(sc)
    self.write_line("[OK]")


def do_reload(self, *args):
    """``reload``: the device restarts with its startup config (Cisco IOS Configuration Fundamentals, "Rebooting and
    Reloading": at boot the startup configuration in NVRAM is loaded). As on IOS it first asks "System configuration
    has been modified. Save? [yes/no]:" when the running config differs from the startup config, then "Proceed with
    reload? [confirm]". Here the restart is instant: a pending commit-confirm is gone, the running config is the
    startup config, and the session that reloaded ends (other open sessions stay: a real reload ends them too)."""
    sc = self.switch_configuration
    if running_config_text(sc) != getattr(sc, "_startup", running_config_text(sc)):
        self.write("System configuration has been modified. Save? [yes/no]: ")
        self.continue_to(lambda answer: _reload_saved(self, answer))
    else:
        _reload_confirm(self)


def _reload_saved(proc, answer: str) -> None:
    a = answer.strip().lower()
    if a and "yes".startswith(a):
        do_write(proc)
    elif not (a and "no".startswith(a)):
        proc.write_line("% Please answer 'yes' or 'no'.")
        return
    _reload_confirm(proc)


def _reload_confirm(proc) -> None:
    proc.write("Proceed with reload? [confirm]")
    proc.continue_to(lambda answer: _reload_now(proc, answer))


def _reload_now(proc, answer: str) -> None:
    if answer.strip() and not "yes".startswith(answer.strip().lower()):
        return
    sc = proc.switch_configuration
    cancel_revert_timer(sc)
    _replace_exact(proc, getattr(sc, "_startup", running_config_text(sc)))
    log.warning("reload: the running config is the startup config again")
    tc = proc.terminal_controller
    while hasattr(tc, "terminal_controller"):
        tc = tc.terminal_controller
    shell = getattr(tc, "shell", None)
    if shell is not None:
        shell.terminal.loseConnection()


def do_configure(self, *args):
    """``configure replace URL [force] [revert trigger error] [[revert] timer N]``, ``configure terminal revert
    timer N``, ``configure confirm``, ``configure revert now``; plain ``configure terminal`` is stock."""
    sc = self.switch_configuration
    a = [x.lower() for x in args]
    if a and len(a[0]) >= 3 and "replace".startswith(a[0]):
        if len(a) < 2:
            self.write_line("% Incomplete command.")
            return
        c = flash(sc).get(_fname(args[1]))
        if c is None:
            self.write_line("%%Error opening %s (No such file or directory)" % args[1])
            return
        minutes = int(a[a.index("timer") + 1]) if "timer" in a[:-1] else None
        if minutes is not None and not archive_enabled(sc):
            self.write_line("%Please turn config archive on")
            return
        original = running_config_text(sc)
        ok, out = configure_replace(self, c, trigger_error="trigger" in a)
        for line in out:
            self.write_line(line)
        if ok and minutes is not None:
            start_revert_timer(self, minutes)
            sc._revert["text"] = original
        return
    if a[:1] and "terminal".startswith(a[0]) and "revert" in a[1:2] and "timer" in a[2:3]:
        if not archive_enabled(sc):
            self.write_line("%Please turn config archive on")
            return
        start_revert_timer(self, int(a[3]))
        return _orig["do_configure"](self, "terminal")
    if a[:1] and len(a[0]) >= 4 and "confirm".startswith(a[0]):
        if not cancel_revert_timer(sc):
            self.write_line("%No Rollback Confirmed Change pending or Rollback Timer is not started.")
        return
    if a[:2] == ["revert", "now"]:
        pending = getattr(sc, "_revert", None)
        if pending is None:
            self.write_line("%No Rollback Confirmed Change pending or Rollback Timer is not started.")
            return
        cancel_revert_timer(sc)
        _replace_exact(self, pending["text"])
        self.write_line("Rollback Done")
        return
    return _orig["do_configure"](self, *args)


def _show_version(self):
    """Stock ``show version`` (a 3750) rewritten for the emulated platform."""
    model, family, feature = PLATFORMS[get_platform(self.switch_configuration)]
    text = _enabled.version_text(hostname=self.switch_configuration.name,
                                 vlan_port_count=len(self.switch_configuration.get_vlan_ports()),
                                 port_count=len(self.switch_configuration.get_physical_ports()))
    marks = {"WS-C3750G-24TS-1U": "\0model\0", "C3750-IPSERVICESK9": "\0image\0",
             "c3750-ipservicesk9": "\0file\0", "C3750": "\0family\0"}
    for old, mark in marks.items():            # through marks: a family such as C3750ME contains C3750
        text = text.replace(old, mark)
    for mark, new in (("\0model\0", model), ("\0image\0", f"{family}-{feature}"),
                      ("\0file\0", f"{family.lower()}-{feature.lower()}"), ("\0family\0", family)):
        text = text.replace(mark, new)
    for line in text.splitlines():
        self.write_line(line)


def do_tclsh(self, *args):
    self.move_to(TclCommandProcessor(self))


# ----------------------------------------------------------------------------- config mode
def set_fault_file(path: str | None) -> None:
    """Test-only runtime fault injection: a JSON file re-read whenever it changes (absent = no faults)::

        {"reject": [REGEX, ...], "drop": [REGEX, ...], "slow": {REGEX: seconds, ...}}

    ``reject``/``drop`` replace the patterns of :func:`set_reject_patterns`/:func:`set_drop_patterns` while the file
    exists; ``slow`` makes a matching exec command (e.g. ``write mem`` on a busy switch) answer only after that many
    seconds, before its echo. Lets one lab serve a whole fault matrix without restarting the emulated switch.
    """
    _state["fault_file"] = path
    _state["fault_mtime"] = None
    _state["base"] = {"reject": list(_state.get("reject", [])), "drop": list(_state.get("drop", []))}


def _refresh_faults() -> None:
    import json
    import os

    path = _state.get("fault_file")
    if not path:
        return
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        mtime = None
    if mtime == _state.get("fault_mtime"):
        return
    _state["fault_mtime"] = mtime
    base = _state.get("base", {"reject": [], "drop": []})
    faults = {}
    if mtime is not None:
        try:
            with open(path) as f:
                faults = json.load(f)
        except (OSError, ValueError) as e:
            log.warning("fault file %s unreadable: %s", path, e)
    _state["reject"] = base["reject"] + [re.compile(x) for x in faults.get("reject", [])]
    _state["drop"] = base["drop"] + [re.compile(x) for x in faults.get("drop", [])]
    _state["slow"] = [(re.compile(k), float(v)) for k, v in faults.get("slow", {}).items()]
    log.info("fault injection from %s: %s", path, faults)


def _maybe_slow(line: str) -> None:
    import time

    for rx, seconds in _state.get("slow", []):
        if rx.search(line.strip()):
            log.warning("fault injection: %r answers after %.0f s", line.strip(), seconds)
            time.sleep(seconds)
            return


def cfg_process_command(self, line):
    """Config-mode entry point (sub-modes included): the ``--reject`` hook, then the stock processor."""
    _refresh_faults()
    if _is_rejected(line):
        _flag(self, INVALID_INPUT)
        log.info("config line rejected by fault injection: %s", line.strip())
        _invalid(self, line)
        self.show_prompt()
        return True
    sub = self.sub_processor
    if sub is not None and line.strip() and not line.strip().startswith("!"):
        if isinstance(sub, ArchiveCommandProcessor):
            word = line.split()[0] if line.split()[0] != "no" else (line.split()[1:2] or [""])[0]
            leaves = word not in ("path", "maximum", "write-memory", "time-period", "exit")
        elif isinstance(sub, AclCommandProcessor):
            leaves = line.split()[0] != "exit" and not acl_word(line.split())
        elif _global_only(line):             # interface mode has `ip ...` too, but not these: IOS leaves the mode
            leaves = True
        else:
            leaves = sub.sub_processor is None and sub.get_command_func(line)[0] is None
        if leaves:                 # IOS: a global command in a sub-mode leaves the sub-mode (and prompts)
            self.sub_processor = None
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
    ConfigCommandProcessor.do_end = cfg_do_end
    ConfigCommandProcessor.do_file = cfg_noop
    ConfigCommandProcessor.do_no_file = cfg_noop
    EnabledCommandProcessor.do_show = do_show
    EnabledCommandProcessor.show_run = _show_run
    EnabledCommandProcessor.do_dir = do_dir
    EnabledCommandProcessor.do_verify = do_verify
    EnabledCommandProcessor.do_more = do_more
    EnabledCommandProcessor.do_delete = do_delete
    EnabledCommandProcessor.do_copy = do_copy
    EnabledCommandProcessor.do_write = do_write
    EnabledCommandProcessor.do_reload = do_reload
    EnabledCommandProcessor.do_configure = do_configure
    EnabledCommandProcessor.do_tclsh = do_tclsh
    EnabledCommandProcessor.process_command = enabled_process_command
    ConfigCommandProcessor.do_archive = cfg_do_archive
    ConfigCommandProcessor.do_no_archive = cfg_do_no_archive
    _orig.update({"cfg_do_ip": ConfigCommandProcessor.do_ip, "cfg_do_no_ip": ConfigCommandProcessor.do_no_ip})
    ConfigCommandProcessor.do_ip = cfg_do_ip_ext
    ConfigCommandProcessor.do_no_ip = cfg_do_no_ip_ext
    ConfigInterfaceCommandProcessor.do_switchport = if_do_switchport
    ConfigInterfaceCommandProcessor.do_no_switchport = if_do_no_switchport
    DefaultCommandProcessor.continue_enabling = continue_enabling
    install_preflight_features()
    _state["installed"] = True


# ============================================================================= platform behaviour
# What real Catalyst switches do that stock fake-switches does not (each rule cites its source):
#  * ``switchport nonegotiate`` is valid only on static access/trunk ports (Catalyst 3750 command reference,
#    "switchport nonegotiate"); ``no switchport mode`` on such a port is refused with NONEG_NEEDS_STATIC, which
#    is what makes ``configure replace`` fail on an access→trunk change (napalm-automation/napalm#1009, #1134).
#  * ISL-capable platforms (3560/3750/4500/6500; "3750" here) default to trunk encapsulation "negotiate" and
#    refuse ``switchport mode trunk`` until ``switchport trunk encapsulation dot1q`` is set (ENCAP_AUTO,
#    seen on a 3750: internap/netman#156); dot1q-only platforms (2960; the default here) have no
#    ``switchport trunk encapsulation`` command at all.
NONEG_NEEDS_STATIC = ('Command rejected: An interface must be configured to the "Access" or "Trunk" modes '
                      'to be configured to "NoNegotiate."')
NONEG_CONFLICT = "Command rejected: Conflict between 'nonegotiate' and 'dynamic' status on this interface: %s"
ENCAP_AUTO = 'Command rejected: An interface whose trunk encapsulation is "Auto" can not be configured to "trunk" mode.'
PLATFORMS = {
    # platform: (model, software image family) as `show version` prints them
    "2960": ("WS-C2960-24TT-L", "C2960", "LANBASEK9"),
    "3750": ("WS-C3750G-24TS-1U", "C3750", "IPSERVICESK9"),
    # Catalyst 3750 Metro, metro IP access image: ISL-capable standard ports ("The default encapsulation is
    # negotiate", 3750 Metro command reference, switchport trunk) and LLDP tunnelling (l2protocol-tunnel, 12.2(58)SE)
    "me3750": ("ME-C3750-24TE-M", "C3750ME", "I5K91"),
}
#: link-local protocols ``l2protocol-tunnel`` accepts per platform (the same documents as
#: :data:`harmless.switch_drivers.ios.platforms.L2PT_PLATFORMS`): none on the 2960 (no Cisco document found says the
#: Catalyst 2960 LAN Base/Lite tunnels, so the emulator has none), no LLDP on the 3750 (Catalyst 3750-X/3560-X guide:
#: "does not support Layer 2 protocol tunneling for LLDP"), LLDP on the 3750 Metro from 12.2(58)SE (the emulated
#: release is 12.2(58)SE2)
L2PT_PROTOCOLS = {"2960": (), "3750": ("cdp", "stp", "vtp", "pagp", "lacp", "udld"),
                  "me3750": ("cdp", "lldp", "stp", "vtp", "pagp", "lacp", "udld")}
_state.update({"drop": [], "minute": 60.0})


def set_platform(sc, platform: str) -> None:
    """Make switch ``sc`` behave like a Catalyst ``platform`` (``"2960"`` dot1q-only, ``"3750"`` ISL-capable,
    ``"me3750"`` a 3750 Metro: ISL-capable and tunnelling LLDP too)."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)})")
    sc._platform = platform


def get_platform(sc) -> str:
    """The emulated platform of ``sc`` (default ``"2960"``)."""
    return getattr(sc, "_platform", "2960")


def isl_capable(sc) -> bool:
    """True when the platform has ``switchport trunk encapsulation`` (and defaults to "negotiate")."""
    return get_platform(sc) in ("3750", "me3750")


def set_drop_patterns(patterns: list[str]) -> None:
    """Fault injection: an exec command matching any of ``patterns`` is executed with its output swallowed and
    then the SSH session is closed (a session lost mid-commit: the change happened, the client never hears)."""
    _state["drop"] = [re.compile(p) for p in patterns]


def set_minute_seconds(seconds: float) -> None:
    """Test-only time scale of the archive revert timer: one IOS minute lasts ``seconds`` (default 60)."""
    _state["minute"] = float(seconds)


def _nonegotiate(port) -> bool:
    return bool(port.vendor_specific.get("nonegotiate"))


def _interface_lines(port) -> list[str]:
    """``build_running_interface`` plus ``switchport nonegotiate`` right after the mode line (IOS order)."""
    lines = _enabled.build_running_interface(port)
    if _nonegotiate(port):
        idx = next((i for i, ln in enumerate(lines) if ln.startswith(" switchport mode ")), len(lines) - 1)
        lines.insert(idx + 1, " switchport nonegotiate")
    return _interface_lines_ext(port, lines)


def _flag(proc, message: str) -> None:
    """Record that the current config line was refused (``message`` as the device prints it)."""
    proc.switch_configuration._cmd_rejected = message


def _refuse(proc, message: str) -> None:
    proc.write_line(message)
    _flag(proc, message)


def _invalid_here(proc, line: str) -> None:
    _invalid(proc, line)
    _flag(proc, INVALID_INPUT)


def if_do_switchport(self, *args):
    """Interface ``switchport ...`` with the platform rules above; the rest is stock fake-switches."""
    sc, port = self.switch_configuration, self.port
    a = tuple(x.lower() for x in args)
    line = "switchport " + " ".join(args)
    if a[:1] == ("nonegotiate",):
        if port.mode not in ("access", "trunk"):
            return _refuse(self, NONEG_CONFLICT % _short(port.name))
        port.vendor_specific["nonegotiate"] = True
        return None
    if a[:2] == ("trunk", "encapsulation"):
        if not isl_capable(sc) or len(a) != 3 or a[2] not in ("dot1q", "isl", "negotiate"):
            return _invalid_here(self, line)
        if a[2] == "negotiate":
            if port.mode == "trunk":
                return _refuse(self, ENCAP_AUTO)
            port.trunk_encapsulation_mode = None
        else:
            port.trunk_encapsulation_mode = a[2]
        return None
    if a[:1] == ("mode",):
        if len(a) < 2 or a[1] not in ("access", "trunk", "dynamic", "dot1q-tunnel"):
            return _invalid_here(self, line)
        if a[1] == "trunk" and isl_capable(sc) and port.trunk_encapsulation_mode in (None, "negotiate"):
            return _refuse(self, ENCAP_AUTO)
        if a[1] == "dynamic":
            if _nonegotiate(port):
                return _refuse(self, NONEG_CONFLICT % _short(port.name))
            port.mode = None if a[2:3] in ((), ("auto",)) else "dynamic desirable"
            return None
        port.mode = a[1]
        return None
    return _orig["if_do_switchport"](self, *args)


def if_do_no_switchport(self, *args):
    """Interface ``no switchport ...`` with the platform rules above."""
    sc, port = self.switch_configuration, self.port
    a = tuple(x.lower() for x in args)
    if a[:1] == ("nonegotiate",):
        port.vendor_specific.pop("nonegotiate", None)
        return None
    if a[:1] == ("mode",):
        if _nonegotiate(port):                  # would fall back to dynamic
            return _refuse(self, NONEG_NEEDS_STATIC)
        port.mode = None
        return None
    if a[:2] == ("trunk", "encapsulation"):
        if not isl_capable(sc):
            return _invalid_here(self, "no switchport " + " ".join(args))
        if port.mode == "trunk":
            return _refuse(self, ENCAP_AUTO)
        port.trunk_encapsulation_mode = None
        return None
    return _orig["if_do_no_switchport"](self, *args)


# ============================================================================= archive (commit-confirm)
class _SubModeProcessor(BaseCommandProcessor):
    """A global-config sub-mode of one-line children: an empty line shows the prompt, ``exit`` leaves, any other line
    goes to :meth:`child` (True: handled, and the prompt shown; False: not ours, the parent handles it)."""

    def process_command(self, line):
        words = line.split()
        if not words:
            self.show_prompt()
            return True
        if words[0] == "exit":
            self.is_done = True
            return True
        if not self.child(words):
            return False                      # not ours: the parent (global config) handles it
        self.show_prompt()
        return True

    def child(self, words: list[str]) -> bool:
        raise NotImplementedError


class ArchiveCommandProcessor(_SubModeProcessor):
    """``archive`` config sub-mode: ``path URL``, ``maximum N``, ``write-memory``, ``time-period N``."""

    def get_prompt(self):
        return self.switch_configuration.name + "(config-archive)#"

    def child(self, words):
        settings = archive_settings(self.switch_configuration)
        key = words[0] if words[0] != "no" else (words[1] if len(words) > 1 else "")
        if key not in ("path", "maximum", "write-memory", "time-period"):
            return False
        settings[:] = [s for s in settings if s.split()[0] != key]
        if words[0] != "no":
            settings.append(" ".join(words))
            settings.sort(key=lambda s: ("path", "maximum", "write-memory", "time-period").index(s.split()[0]))
        return True


def archive_settings(sc) -> list[str]:
    """The ``archive`` block's child lines of ``sc`` (mutable list; empty = no archive block)."""
    if not hasattr(sc, "_archive"):
        sc._archive = []
    return sc._archive


def archive_enabled(sc) -> bool:
    """The archive feature is on when the ``archive`` block has a ``path``."""
    return any(s.startswith("path ") for s in archive_settings(sc))


def cfg_do_archive(self, *_):
    archive_settings(self.switch_configuration)
    self.move_to(ArchiveCommandProcessor())


# ============================================================================= named IP access lists
# Cisco IOS Security Configuration Guide, "IP Access List Overview" / "Creating an IP Access List": ``ip access-list
# standard|extended NAME`` enters the ACL sub-mode (prompt ``config-std-nacl``/``config-ext-nacl``); ``permit``,
# ``deny`` and ``remark`` entries are appended (an optional leading sequence number places it: entries are kept in
# sequence order, 10, 20, ... by default), ``no <entry>`` or ``no <seq>`` deletes one; ``no ip access-list extended
# NAME`` deletes the list. ``show running-config`` prints the lists after the static routes, entries without their
# sequence numbers, ``deny`` padded to the width of ``permit`` (`` deny   tcp any any eq 23``).
_ACL_WORDS = ("permit", "deny", "remark")


def acls(sc) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """The named ACLs of ``sc``: ``{(standard|extended, name): [(sequence, entry text)]}`` (mutable)."""
    if not hasattr(sc, "_acls"):
        sc._acls = {}
    return sc._acls


def acl_lines(sc) -> list[str]:
    """The ACL blocks as the running config prints them."""
    out = []
    for (kind, name), entries in acls(sc).items():
        out.append(f"ip access-list {kind} {name}")
        for _seq, e in sorted(entries):
            word, _, rest = e.partition(" ")
            out.append(f" {word:<6} {rest}" if word in ("permit", "deny") else f" {e}")
    return out


class AclCommandProcessor(_SubModeProcessor):
    """``ip access-list standard|extended NAME`` sub-mode (see the section comment)."""

    def __init__(self, key: tuple[str, str]):
        super().__init__()
        self.key = key

    def get_prompt(self):
        return self.switch_configuration.name + f"(config-{'std' if self.key[0] == 'standard' else 'ext'}-nacl)#"

    def child(self, words):
        if not acl_word(words):
            return False
        entries = acls(self.switch_configuration)[self.key]
        if words[0] == "no":
            rest = " ".join(words[1:])
            entries[:] = [(n, e) for n, e in entries if e != rest and str(n) != rest]
        else:
            seq = int(words[0]) if words[0].isdigit() else max((n for n, _e in entries), default=0) + 10
            text = " ".join(words[1:] if words[0].isdigit() else words)
            entries[:] = [(n, e) for n, e in entries if n != seq] + [(seq, text)]
        return True


def _global_only(line: str) -> bool:
    """A global command whose first words a sub-mode also has (``ip access-list`` vs interface ``ip ...``)."""
    w = [x.lower() for x in line.split()]
    w = w[1:] if w[:1] == ["no"] else w
    return len(w) >= 2 and w[0] == "ip" and len(w[1]) > 1 and "access-list".startswith(w[1])


def acl_word(words: list[str]) -> bool:
    """True when a line belongs to the ACL sub-mode (an entry, its ``no`` form, a sequence number)."""
    w = words[1:] if words[0] == "no" else words
    return bool(w) and (w[0] in _ACL_WORDS or (w[0].isdigit() and (len(w) == 1 or w[1] in _ACL_WORDS)))


def cfg_do_ip_ext(self, cmd, *args):
    """Global ``ip ...``: ``ip access-list standard|extended NAME`` here, the rest as stock fake-switches."""
    if "access-list".startswith(cmd) and len(cmd) > 1 and len(args) == 2 and args[0] in ("standard", "extended"):
        acls(self.switch_configuration).setdefault((args[0], args[1]), [])
        return self.move_to(AclCommandProcessor((args[0], args[1])))
    return _orig["cfg_do_ip"](self, cmd, *args)


def cfg_do_no_ip_ext(self, cmd, *args):
    """Global ``no ip ...``: ``no ip access-list standard|extended NAME`` here, the rest as stock."""
    if "access-list".startswith(cmd) and len(cmd) > 1 and len(args) == 2:
        acls(self.switch_configuration).pop((args[0], args[1]), None)
        return None
    return _orig["cfg_do_no_ip"](self, cmd, *args)


def cfg_do_no_archive(self, *_):
    archive_settings(self.switch_configuration).clear()


def _fresh_processor(sc, fallback=None):
    """A new exec processor on ``sc`` that writes nowhere (for work the device does by itself)."""
    factory = getattr(sc, "_new_processor", None)
    proc = factory() if factory else fallback
    proc.init(sc, NoopTerminalController(), logging.getLogger("harmless.emulators.ios.device"), NotPipingProcessor())
    return proc


def _replace_exact(proc, text: str) -> list[str]:
    """Make the running config equal ``text`` (reset + replay; what a revert to an archive does)."""
    sc = proc.switch_configuration
    _reset_config(sc)
    return apply_config_text(proc, text)


def start_revert_timer(proc, minutes: int) -> None:
    """Archive the running config and revert to it in ``minutes`` unless ``configure confirm`` comes first."""
    sc = proc.switch_configuration
    cancel_revert_timer(sc)
    pending = {"text": running_config_text(sc), "minutes": minutes, "call": None,
               "user": getattr(sc, "_archive_user", "admin"), "proc": proc}
    try:
        from twisted.internet import reactor
        if reactor.running:
            pending["call"] = reactor.callLater(minutes * _state["minute"], expire_revert_timer, sc)
    except ImportError:  # pragma: no cover - twisted is a fake-switches dependency
        pass
    sc._revert = pending
    log.info("archive: revert timer started (%d min)", minutes)


def cancel_revert_timer(sc) -> bool:
    """Stop a pending revert timer; True when one was pending."""
    pending = getattr(sc, "_revert", None)
    sc._revert = None
    if pending and pending["call"] is not None and pending["call"].active():
        pending["call"].cancel()
    return pending is not None


def expire_revert_timer(sc) -> None:
    """The revert timer ran out: go back to the archived config (also callable directly in tests)."""
    pending = getattr(sc, "_revert", None)
    if pending is None:
        return
    sc._revert = None
    _replace_exact(_fresh_processor(sc, pending["proc"]), pending["text"])
    log.warning("archive: revert timer expired, configuration rolled back")


def _show_rollback_timer(self):
    pending = getattr(self.switch_configuration, "_revert", None)
    if not pending:
        self.write_line("%No Rollback Confirmed Change pending or Rollback Timer is not started.")
        return
    # the layout NAPALM ios parses (ios.py _get_pending_commits: "Timer type: ...", "User: ...")
    self.write_line("Time configured(or reset): 00:00:00 UTC Mon Mar 1 1993")
    self.write_line("Timer type: Rollback Confirmed Change")
    self.write_line("Timer value: %d min" % pending["minutes"])
    self.write_line("User: %s" % pending["user"])


def _show_archive(self):
    sc = self.switch_configuration
    if not archive_enabled(sc):
        self.write_line("Archive feature not enabled")
        return
    path = next(s.split(None, 1)[1] for s in archive_settings(sc) if s.startswith("path "))
    self.write_line("The maximum archive configurations allowed is 10.")
    self.write_line("The next archive file will be named %s-1" % path)
    self.write_line(" Archive #  Name")
    for i in range(1, 11):
        self.write_line("   %-2d" % i)


# ============================================================================= configure replace (IOS semantics)
_SKIP_PARENTS = ("version", "building", "current", "end")


def replace_commands(running: str, candidate: str) -> list[list[str]]:
    """The commands ``configure replace`` runs to turn ``running`` into ``candidate`` (one pass).

    Like IOS's rollback configlet: per top-level block, the ``no`` form of every line that is only in
    ``running`` first, then every line only in ``candidate``; blocks that vanish are removed with ``no``
    (physical interfaces with ``default interface``). Lines that are themselves ``no ...`` are never negated.

    Returns:
        Groups of config lines (a parent line followed by indented children, or one global line).
    """
    run, new = _blocks(running), _blocks(candidate)
    groups: list[list[str]] = []
    for parent in list(run) + [p for p in new if p not in run]:
        word = parent.split()[0]
        if word in _SKIP_PARENTS:
            continue
        if word == "hostname":
            if parent not in new:
                hn = [p for p in new if p.split()[0] == "hostname"]
                if hn:
                    groups.append([hn[0].text])
            continue
        if parent not in new:
            if parent.startswith("interface ") and not re.match(r"interface (vlan|port-channel)", parent):
                groups.append(["default " + parent.text])
            elif not parent.startswith("no "):
                groups.append(["no " + parent.text])
            elif parent.startswith("no mac address-table learning "):    # a default-on feature turned off: on
                groups.append([parent.text[3:]])
            continue
        rem = [c for c in run.get(parent, []) if c not in new[parent] and not c.startswith("no ")]
        add = [c for c in new[parent] if c not in run.get(parent, [])]
        if parent not in run or rem or add:
            groups.append([parent.text] + [" no " + c.text for c in rem] + [" " + c.text for c in add])
    return groups


def configure_replace(proc, candidate: str, trigger_error: bool) -> tuple[bool, list[str]]:
    """Run IOS ``configure replace`` of ``candidate`` on ``proc``'s switch.

    Up to 5 passes of :func:`replace_commands` (IOS retries failed commands in later passes). With
    ``trigger_error`` (``revert trigger error``, what NAPALM sends) the first failed command aborts and the
    original configuration is restored.

    Returns:
        (success, output lines as IOS prints them).
    """
    sc = proc.switch_configuration
    original = running_config_text(sc)
    failed: list[str] = []
    for n in range(1, 6):
        groups = replace_commands(running_config_text(sc), candidate)
        if not groups:
            return True, ["Total number of passes: %d" % max(n - 1, 1), "Rollback Done"]
        failed = []
        for group in groups:
            for line, message in apply_config_detailed(proc, "\n".join(group)):
                failed.append(line)
                if trigger_error:
                    _replace_exact(proc, original)
                    return False, [message, "Failed to apply command %s" % line, "Aborting Rollback.", "",
                                   "Rollback failed.Reverting back to the original configuration: "
                                   "flash:archive-original ...", "", "Total number of passes: 0", "Rollback Done",
                                   "", "The original configuration has been successfully restored."]
    if not replace_commands(running_config_text(sc), candidate):
        return True, ["Total number of passes: 5", "Rollback Done"]
    return False, (["Rollback aborted after 5 passes",
                    "The following commands are failed to apply to the IOS image.", "********"]
                   + failed + ["********"])


def apply_config_detailed(processor, text: str) -> list[tuple[str, str]]:
    """Like :func:`apply_config_text`, returning ``(rejected line, device message)`` pairs."""
    sc = processor.switch_configuration
    cp = processor.config_processor
    cp.init(sc, NoopTerminalController(), processor.logger, NotPipingProcessor())
    bad = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("!") or s == "end" or s.split()[0] in ("version", "hostname", "Building", "Current"):
            if s.split()[:1] == ["hostname"] and len(s.split()) == 2:
                sc.name = s.split()[1]
            continue
        if line[0] not in " \t":
            cp.sub_processor = None
        sc._cmd_rejected = None
        if not cp.process_command(line):
            bad.append((s, INVALID_INPUT))
        elif sc._cmd_rejected:
            bad.append((s, sc._cmd_rejected))
    cp.sub_processor = None
    sc._cmd_rejected = None
    return bad


# ============================================================================= exec: session loss
def enabled_process_command(self, line):
    """Exec-mode entry point: the ``--drop-session-on`` and fault-file injections, then the stock processor."""
    _refresh_faults()
    if self.sub_processor is None and line.strip():
        _maybe_slow(line)
    if self.sub_processor is None and line.strip() and any(p.search(line.strip()) for p in _state["drop"]):
        tc = self.terminal_controller
        self.terminal_controller = NoopTerminalController()
        try:
            _orig["enabled_process_command"](self, line)
        finally:
            self.terminal_controller = tc
        log.warning("fault injection: dropping the SSH session after %r", line.strip())
        while hasattr(tc, "terminal_controller"):
            tc = tc.terminal_controller
        shell = getattr(tc, "shell", None)
        if shell is not None:
            shell.terminal.loseConnection()
        return True
    return _orig["enabled_process_command"](self, line)


# ============================================================================= preflight features (issue #12)
# What the preflight rules read on a real Catalyst and stock fake-switches lacks:
#  * VTP (Catalyst 2960/3750 configuration guides, "Configuring VTP"): a switch is a VTP *server* by default; a server
#    or client keeps VLANs 1-1005 in vlan.dat, so neither the VLANs nor the ``vtp`` lines appear in the running
#    config; in transparent (and, IOS 12.2(52)SE+, off) mode ``vtp domain``/``vtp mode`` and the VLANs are printed.
#    A client cannot create VLANs; VTP v1/v2 servers cannot create extended VLANs (1006-4094).
#  * ``spanning-tree mode`` (default pvst) and ``spanning-tree extend system-id``, printed as IOS prints them.
#  * port-channels: ``channel-group N mode on|active|passive|desirable|auto`` read back as written, the
#    ``interface Port-channelN`` it creates printed before the physical ports, ``show etherchannel summary``.
#  * ``switchport voice vlan``, ``switchport port-security ...`` (refused on a dynamic port, as IOS does),
#    802.1X/MAB lines (``dot1x ...``, ``authentication ...``, ``mab``, ``access-session ...``), kept in order.
#  * routed ports (``no switchport`` + ``ip address``) on the ISL-capable (3750) platform only; a 2960 LAN Base
#    has none (``no switchport`` is invalid input there).
#  * the session's ingress port (:func:`set_session_port`): ``show users`` / ``show ip arp`` / ``show mac
#    address-table address`` answer as for a management station behind that port.
VTP_CLIENT_REFUSED = "VTP VLAN configuration not allowed when device is in CLIENT mode."
VTP_EXTENDED_REFUSED = "Extended VLAN(s) not allowed in current VTP mode."
NOT_L3 = "% IP addresses may not be configured on L2 links."
CHANNEL_MODES = ("on", "active", "passive", "desirable", "auto")
#: the emulated management station's address and MAC (only shown when a session port is set)
STATION_IP, STATION_MAC = "192.0.2.200", "0200.c000.02c8"


def vtp_state(sc) -> dict:
    """The switch's VTP state (what vlan.dat holds): ``{"mode", "domain", "revision"}``; default server."""
    if not hasattr(sc, "_vtp"):
        sc._vtp = {"mode": "server", "domain": "", "revision": 0}
    return sc._vtp


def vlans_in_running_config(sc) -> bool:
    """VLANs are printed in the running config only in VTP transparent/off mode."""
    return vtp_state(sc)["mode"] in ("transparent", "off")


def stp_mode(sc) -> str:
    return getattr(sc, "_stp_mode", "pvst")


def set_session_port(sc, interface: str | None) -> None:
    """Make ``show users``/``show ip arp``/``show mac address-table`` say the SSH session arrives on ``interface``."""
    sc._session_port = interface


def _global_lines(sc) -> list[str]:
    """``vtp``, ``spanning-tree`` and ``no mac address-table learning`` lines as IOS prints them between
    ``hostname`` and the VLANs."""
    v = vtp_state(sc)
    out = []
    if v["mode"] in ("transparent", "off"):
        out += ([f"vtp domain {v['domain']}"] if v["domain"] else []) + [f"vtp mode {v['mode']}", "!"]
    off = no_learning_vlans(sc)
    learning = [f"no mac address-table learning vlan {format_vid_ranges(sorted(off))}", "!"] if off else []
    return out + [f"spanning-tree mode {stp_mode(sc)}", "spanning-tree extend system-id", "!"] + learning


# ----------------------------------------------------------------------------- MAC learning per VLAN
# Catalyst 3750-X/3560-X Software Configuration Guide, IOS 15.0(2)SE, "Disabling MAC Address Learning on a VLAN":
# ``no mac address-table learning vlan vlan-id`` (a VID or a list/range, global config), undone by ``mac
# address-table learning vlan vlan-id``; the running config lists the VLANs without learning on one line; ``show mac
# address-table learning`` shows each VLAN's learning status. The Catalyst 2960 guides have no such feature, so the
# 2960 platform here refuses both the command and the show (invalid input), as the IOS driver's probe expects.
def no_learning_vlans(sc) -> set[int]:
    """The VLANs whose MAC learning is off (the data plane floods them: :func:`dataplane.learning_flows`)."""
    if not hasattr(sc, "_no_learning_vlans"):
        sc._no_learning_vlans = set()
    return sc._no_learning_vlans


def _mac_learning(proc, args, off: bool) -> None:
    """``[no] mac address-table learning vlan LIST`` (platforms with per-VLAN learning control only)."""
    a = [x.lower() for x in args]
    line = ("no " if off else "") + "mac " + " ".join(args)
    if get_platform(proc.switch_configuration) == "2960" or a[:3] != ["address-table", "learning", "vlan"] \
            or len(a) != 4:
        return _invalid_here(proc, line)
    try:
        vids = set(parse_vlan_list_text(args[3]))
    except ValueError:
        return _invalid_here(proc, line)
    vlans = no_learning_vlans(proc.switch_configuration)
    vlans.update(vids) if off else vlans.difference_update(vids)
    return None


def cfg_do_mac(self, *args):
    return _mac_learning(self, args, off=False)


def cfg_do_no_mac(self, *args):
    return _mac_learning(self, args, off=True)


def _show_mac_learning(self):
    sc = self.switch_configuration
    if get_platform(sc) == "2960":
        return _invalid(self, "show mac address-table learning")
    self.write_line("VLAN  Learning Status")
    self.write_line("----  ---------------")
    for v in sorted(sc.vlans, key=lambda v: v.number):
        self.write_line("%-5d %s" % (v.number, "no" if v.number in no_learning_vlans(sc) else "yes"))
    return None


def cfg_do_vtp(self, *args):
    sc, a = self.switch_configuration, [x.lower() for x in args]
    v = vtp_state(sc)
    if a[:1] == ["mode"] and len(a) == 2 and a[1] in ("server", "client", "transparent", "off"):
        v["mode"] = a[1]
    elif a[:1] == ["domain"] and len(args) == 2:
        v["domain"] = args[1]
    elif a[:1] in (["version"], ["password"], ["pruning"]):
        pass
    else:
        _invalid_here(self, "vtp " + " ".join(args))


def cfg_do_no_vtp(self, *args):
    v = vtp_state(self.switch_configuration)
    a = [x.lower() for x in args]
    if a[:1] == ["mode"]:
        v["mode"] = "server"
    elif a[:1] == ["domain"]:
        v["domain"] = ""


def cfg_do_spanning_tree(self, *args):
    a = [x.lower() for x in args]
    if a[:1] == ["mode"] and a[1:2] and a[1] in ("pvst", "rapid-pvst", "mst"):
        self.switch_configuration._stp_mode = a[1]
    elif a[:2] == ["extend", "system-id"] or a[:1] in (["vlan"], ["loopguard"], ["mst"]) or (
            a[:1] == ["portfast"] and "default" in a):
        pass
    else:
        _invalid_here(self, "spanning-tree " + " ".join(args))


def cfg_do_no_spanning_tree(self, *args):
    if [x.lower() for x in args[:1]] == ["mode"]:
        self.switch_configuration._stp_mode = "pvst"


def cfg_do_vlan(self, raw, *rest):
    """``vlan N`` / ``vlan 10,20,30-32`` with the VTP rules (client refuses; server refuses extended VLANs)."""
    sc = self.switch_configuration
    mode = vtp_state(sc)["mode"]
    try:
        vids = sorted(parse_vlan_list_text(raw))
    except ValueError:
        return _invalid_here(self, "vlan " + raw)
    if mode == "client":
        return _refuse(self, VTP_CLIENT_REFUSED)
    if mode == "server" and any(v > 1005 for v in vids):
        self.write_line("% Failed to create VLANs " + raw)
        return _refuse(self, VTP_EXTENDED_REFUSED)
    if mode == "server":
        vtp_state(sc)["revision"] += 1
    if len(vids) == 1:
        return _orig["cfg_do_vlan"](self, str(vids[0]), *rest)
    for vid in vids:
        if sc.get_vlan(vid) is None:
            sc.add_vlan(sc.new("Vlan", vid))
    return None


def cfg_do_no_vlan(self, *args):
    sc = self.switch_configuration
    if vtp_state(sc)["mode"] == "client":
        return _refuse(self, VTP_CLIENT_REFUSED)
    try:
        vids = parse_vlan_list_text(args[0])
    except (ValueError, IndexError):
        return _invalid_here(self, "no vlan " + " ".join(args))
    for vid in vids:
        v = sc.get_vlan(vid)
        if v is not None and vid != 1:
            sc.remove_vlan(v)
    if vtp_state(sc)["mode"] == "server":
        vtp_state(sc)["revision"] += 1
    return None


def parse_vlan_list_text(text: str) -> list[int]:
    """``10,20,30-32`` -> VIDs (ValueError on anything else)."""
    out = []
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        lo_i, hi_i = int(lo), int(hi or lo)
        if not 1 <= lo_i <= hi_i <= 4094:
            raise ValueError(text)
        out += range(lo_i, hi_i + 1)
    return out


# ----------------------------------------------------------------------------- interface features
def _vs(port) -> dict:
    return port.vendor_specific


def _ordered(port, key: str) -> list[str]:
    return _vs(port).setdefault(key, [])


def _put(lines: list[str], line: str, same: int) -> None:
    """Replace the line with the same first ``same`` words, else append (IOS keeps one line per setting)."""
    head = line.split()[:same]
    for i, ln in enumerate(lines):
        if ln.split()[:same] == head:
            lines[i] = line
            return
    lines.append(line)


def if_do_channel_group(self, *args):
    a = [x.lower() for x in args]
    if len(a) != 3 or not a[0].isdigit() or a[1] != "mode" or a[2] not in CHANNEL_MODES:
        return _invalid_here(self, "channel-group " + " ".join(args))
    _orig["if_do_channel_group"](self, args[0])
    _vs(self.port)["channel_mode"] = a[2]
    return None


def if_do_no_channel_group(self, *args):
    _vs(self.port).pop("channel_mode", None)
    return _orig["if_do_no_channel_group"](self, *args)


def _switchport_feature(self, a: tuple[str, ...], line: str) -> bool | None:
    """Voice VLAN and port security; True when handled."""
    port = self.port
    if a[:2] == ("voice", "vlan") and len(a) == 3:
        if not (a[2].isdigit() and 1 <= int(a[2]) <= 4094) and a[2] not in ("dot1p", "untagged", "none"):
            _invalid_here(self, line)
            return True
        _vs(port)["voice"] = a[2]
        return True
    if a[:1] == ("port-security",):
        if len(a) == 1 and port.mode not in ("access", "trunk"):
            _refuse(self, f"Command rejected: {port.name} is a dynamic port.")
            return True
        _put(_ordered(port, "psec"), line, 4 if a[1:3] == ("mac-address", "sticky") and len(a) == 4 else 3)
        return True
    return None


def _l2_refused(self, line: str) -> bool:
    if _vs(self.port).get("routed"):
        _invalid_here(self, line)
        return True
    return False


def if_do_switchport_ext(self, *args):
    """``switchport`` (back to layer 2), voice VLAN, port security; the rest as :func:`if_do_switchport`."""
    a = tuple(x.lower() for x in args)
    line = "switchport " + " ".join(args)
    if not a:
        _vs(self.port).pop("routed", None)
        _vs(self.port).pop("ip", None)
        return None
    if _l2_refused(self, line):
        return None
    if _switchport_feature(self, a, line):
        return None
    return if_do_switchport(self, *args)


def if_do_no_switchport_ext(self, *args):
    """``no switchport`` (routed port, 3750 only), ``no switchport voice vlan``, ``no switchport port-security``."""
    port, a = self.port, tuple(x.lower() for x in args)
    if not a:
        if not isl_capable(self.switch_configuration):
            return _invalid_here(self, "no switchport")
        port.mode, port.access_vlan, port.trunk_vlans, port.trunk_native_vlan = None, None, None, None
        port.trunk_encapsulation_mode = None
        for k in ("voice", "psec", "nonegotiate", "l2pt", "l2pt_lines"):
            _vs(port).pop(k, None)
        _vs(port)["routed"] = True
        return None
    if a[:2] == ("voice", "vlan"):
        _vs(port).pop("voice", None)
        return None
    if a[:1] == ("port-security",):
        lines = _ordered(port, "psec")
        if len(a) == 1:
            lines[:] = [ln for ln in lines if ln != "switchport port-security"]
        else:
            head = ("switchport " + " ".join(args)).split()
            lines[:] = [ln for ln in lines if ln.split()[:len(head)] != head]
        return None
    return if_do_no_switchport(self, *args)


def _aaa_line(self, word: str, args) -> None:
    line = " ".join([word, *args])
    same = 1 if word == "mab" else 2
    _put(_ordered(self.port, "aaa"), line, same)


def _no_aaa_line(self, word: str, args) -> None:
    head = [word, *args][:2]
    lines = _ordered(self.port, "aaa")
    lines[:] = [ln for ln in lines if ln.split()[:len(head)] != head]


def if_do_ip(self, *args):
    """``ip address A M`` on a routed physical port; L2 ports refuse it (stock handles SVIs)."""
    if isinstance(self.port, VlanPort):
        return _orig["if_do_ip"](self, *args)
    a = [x.lower() for x in args]
    if a[:1] and "address".startswith(a[0]) and len(a) >= 3:
        if not _vs(self.port).get("routed"):
            return _refuse(self, NOT_L3)
        _vs(self.port)["ip"] = f"{args[1]} {args[2]}"
        return None
    return _orig["if_do_ip"](self, *args)


def if_do_no_ip(self, *args):
    if isinstance(self.port, VlanPort):
        return _orig["if_do_no_ip"](self, *args)
    if [x.lower() for x in args[:1]] and "address".startswith(args[0].lower()):
        _vs(self.port).pop("ip", None)
        return None
    return _orig["if_do_no_ip"](self, *args)


def _interface_lines_ext(port, lines: list[str]) -> list[str]:
    """Fix and extend stock interface lines: real channel-group mode, voice, port security, 802.1X, routed."""
    vs = _vs(port)
    if vs.get("routed"):
        head = [ln for ln in lines[:2] if ln.startswith(("interface ", " description "))]
        rest = [ln for ln in lines if ln in (" shutdown",)]
        return head + [" no switchport"] + ([f" ip address {vs['ip']}"] if vs.get("ip") else [" no ip address"]) \
            + rest
    out = []
    for ln in lines:
        if ln.startswith(" channel-group ") and vs.get("channel_mode"):
            ln = " channel-group %s mode %s" % (ln.split()[1], vs["channel_mode"])
        out.append(ln)
    extra = ([f" switchport voice vlan {vs['voice']}"] if vs.get("voice") else []) \
        + [" " + ln for ln in vs.get("psec", [])] + [" " + ln for ln in vs.get("aaa", [])] + _l2pt_lines(port)
    if extra:
        idx = max((i for i, ln in enumerate(out) if ln.startswith(" switchport ")), default=len(out) - 1)
        out[idx + 1:idx + 1] = extra
    return out


# ----------------------------------------------------------------------------- Layer 2 protocol tunnelling (#21)
# ``l2protocol-tunnel [cdp|lldp|stp|vtp]`` and ``l2protocol-tunnel point-to-point [pagp|lacp|udld]`` on an access or
# dot1q-tunnel port (Catalyst configuration guides, "Configuring Layer 2 Protocol Tunneling": "You can enable Layer 2
# protocol tunneling on ports that are configured as access ports or tunnel ports. You cannot enable Layer 2 protocol
# tunneling on ports configured in either switchport mode dynamic auto ... or dynamic desirable"); without a keyword
# every protocol of that kind the platform has. One line per protocol in the running config, CDP/LLDP/STP/VTP first
# (as a Catalyst prints them, e.g. "l2protocol-tunnel cdp" then "l2protocol-tunnel stp"); threshold lines are kept as
# written. The data plane applies them (:func:`harmless.emulators.dataplane.l2pt_flows`).
L2PT_P2MP = ("cdp", "lldp", "stp", "vtp")
L2PT_P2P = ("pagp", "lacp", "udld")
#: the emulator's wording (IOS refuses the command there; its exact text is not documented)
L2PT_NOT_STATIC = "Command rejected: %s is not an access or 802.1Q tunnel port; Layer 2 protocol tunneling refused."


def l2pt_protocols(port) -> tuple[str, ...]:
    """The protocols ``port`` tunnels, in running-config order."""
    have = _vs(port).get("l2pt", ())
    return tuple(p for p in L2PT_P2MP + L2PT_P2P if p in have)


def _l2pt_words(self, args) -> tuple[str, ...] | None:
    """The protocols an ``l2protocol-tunnel [point-to-point] [protocol]`` line names on this platform; None when the
    line is not valid input here."""
    allowed = L2PT_PROTOCOLS[get_platform(self.switch_configuration)]
    a = [x.lower() for x in args]
    kind = L2PT_P2MP
    if a[:1] == ["point-to-point"]:
        kind, a = L2PT_P2P, a[1:]
    if len(a) > 1 or (a and (a[0] not in kind or a[0] not in allowed)):
        return None
    return tuple(a) if a else tuple(p for p in kind if p in allowed)


def if_do_l2protocol_tunnel(self, *args):
    line = "l2protocol-tunnel " + " ".join(args)
    if _l2_refused(self, line):
        return None
    if not L2PT_PROTOCOLS[get_platform(self.switch_configuration)]:
        return _invalid_here(self, line)
    a = [x.lower() for x in args]
    if a[:1] in (["drop-threshold"], ["shutdown-threshold"]):
        _put(_ordered(self.port, "l2pt_lines"), " ".join(["l2protocol-tunnel", *args]), len(args))
        return None
    protos = _l2pt_words(self, args)
    if protos is None:
        return _invalid_here(self, line)
    if self.port.mode not in ("access", "dot1q-tunnel"):
        return _refuse(self, L2PT_NOT_STATIC % self.port.name)
    _vs(self.port)["l2pt"] = sorted(set(_vs(self.port).get("l2pt", ())) | set(protos))
    return None


def if_do_no_l2protocol_tunnel(self, *args):
    a = [x.lower() for x in args]
    if a[:1] in (["drop-threshold"], ["shutdown-threshold"]):
        head = ["l2protocol-tunnel", *a[:-1]] if len(a) > 2 else ["l2protocol-tunnel", *a]
        lines = _ordered(self.port, "l2pt_lines")
        lines[:] = [ln for ln in lines if ln.lower().split()[:len(head)] != head]
        return None
    protos = _l2pt_words(self, args)
    if protos is None:
        return _invalid_here(self, "no l2protocol-tunnel " + " ".join(args))
    _vs(self.port)["l2pt"] = sorted(set(_vs(self.port).get("l2pt", ())) - set(protos))
    return None


def _l2pt_lines(port) -> list[str]:
    protos = l2pt_protocols(port)
    return ([f" l2protocol-tunnel {p}" for p in protos if p in L2PT_P2MP]
            + [f" l2protocol-tunnel point-to-point {p}" for p in protos if p in L2PT_P2P]
            + [" " + ln for ln in _vs(port).get("l2pt_lines", [])])


def aggregated_ports(sc) -> list:
    return sorted((p for p in sc.ports if isinstance(p, AggregatedPort)), key=lambda p: int(_digits(p.name) or 0))


def _digits(name: str) -> str:
    m = re.search(r"(\d+)$", name)
    return m.group(1) if m else ""


def _show_etherchannel_summary(self):
    sc = self.switch_configuration
    lags = aggregated_ports(sc)
    for line in ("Flags:  D - down        P - bundled in port-channel", "        I - stand-alone s - suspended",
                 "        H - Hot-standby (LACP only)", "        R - Layer3      S - Layer2",
                 "        U - in use      f - failed to allocate aggregator", "",
                 "        M - not in use, minimum links not met", "        u - unsuitable for bundling",
                 "        w - waiting to be aggregated", "        d - default port", "", "",
                 f"Number of channel-groups in use: {len(lags)}", f"Number of aggregators:           {len(lags)}",
                 "", "Group  Port-channel  Protocol    Ports",
                 "------+-------------+-----------+-----------------------------------------------"):
        self.write_line(line)
    for lag in lags:
        members = [p for p in sc.get_physical_ports() if p.aggregation_membership == lag.name]
        modes = {_vs(p).get("channel_mode") for p in members}
        proto = "LACP" if modes & {"active", "passive"} else ("PAgP" if modes & {"desirable", "auto"} else "-")
        ports = "   ".join(f"{_short(p.name)}(P)" for p in members)
        self.write_line("%-6s %-13s %-11s %s" % (_digits(lag.name), f"Po{_digits(lag.name)}(SU)", proto, ports))


def _show_vtp_status(self):
    sc = self.switch_configuration
    v = vtp_state(sc)
    mode = {"server": "Server", "client": "Client", "transparent": "Transparent", "off": "Off"}[v["mode"]]
    rev = v["revision"] if v["mode"] in ("server", "client") else 0
    for line in ("VTP Version capable             : 1 to 3", "VTP version running             : 1",
                 f"VTP Domain Name                 : {v['domain']}", "VTP Pruning Mode                : Disabled",
                 "VTP Traps Generation            : Disabled", "Device ID                       : 0011.2233.4400",
                 "Configuration last modified by 0.0.0.0 at 3-1-93 00:00:00",
                 "Local updater ID is 0.0.0.0 (no valid interface found)", "", "Feature VLAN:", "--------------",
                 f"VTP Operating Mode                : {mode}", "Maximum VLANs supported locally   : 255",
                 f"Number of existing VLANs          : {len(sc.vlans) + 4}",
                 f"Configuration Revision            : {rev}",
                 "MD5 digest                        : 0x9E 0x2F 0x23 0x56 0x11 0xAD 0x87 0x40 ",
                 "                                    0x53 0xE1 0x14 0x1B 0x2C 0x62 0x0A 0x44 ", ""):
        self.write_line(line)


def _show_users(self):
    sc = self.switch_configuration
    where = STATION_IP if getattr(sc, "_session_port", None) else "127.0.0.1"
    self.write_line("    Line       User       Host(s)              Idle       Location")
    self.write_line("*  1 vty 0     %-10s idle                 00:00:00 %s" % (getattr(sc, "_archive_user", "admin"),
                                                                           where))
    self.write_line("")
    self.write_line("  Interface    User               Mode         Idle     Peer Address")
    self.write_line("")


def _show_ip_arp(self, args):
    sc = self.switch_configuration
    self.write_line("Protocol  Address          Age (min)  Hardware Addr   Type   Interface")
    if getattr(sc, "_session_port", None) and (not args or args[0] == STATION_IP):
        self.write_line("Internet  %-16s %5s   %s  ARPA   Vlan1" % (STATION_IP, "0", STATION_MAC))


def _show_mac_address_table(self, args):
    sc = self.switch_configuration
    port = getattr(sc, "_session_port", None)
    self.write_line("          Mac Address Table")
    self.write_line("-------------------------------------------")
    self.write_line("")
    self.write_line("Vlan    Mac Address       Type        Ports")
    self.write_line("----    -----------       --------    -----")
    n = 0
    if port and (len(args) < 2 or args[1].lower() == STATION_MAC):
        self.write_line("   1    %s    DYNAMIC     %s" % (STATION_MAC, _short(port)))
        n = 1
    self.write_line(f"Total Mac Addresses for this criterion: {n}")


def do_show_ext(self, *args):
    """``show vtp status``, ``show etherchannel summary``, ``show users``, ``show ip arp``, ``show mac
    address-table``; the rest as :func:`do_show`."""
    a = [x.lower() for x in args]
    if a[:1] == ["vtp"] and a[1:2] and "status".startswith(a[1]):
        return _show_vtp_status(self)
    if a[:1] and len(a[0]) >= 5 and "etherchannel".startswith(a[0]) and a[1:2] and "summary".startswith(a[1]):
        return _show_etherchannel_summary(self)
    if a[:1] and len(a[0]) >= 2 and "users".startswith(a[0]):
        return _show_users(self)
    if len(a) >= 2 and a[0] == "ip" and "arp".startswith(a[1]):
        return _show_ip_arp(self, args[2:])
    if len(a) >= 3 and a[0] == "mac" and "address-table".startswith(a[1]) and "learning".startswith(a[2]):
        return _show_mac_learning(self)
    if len(a) >= 2 and a[0] == "mac" and "address-table".startswith(a[1]):
        return _show_mac_address_table(self, args[2:])
    return do_show(self, *args)


def _make_aaa_handlers():
    def make(word):
        def do(self, *args):
            if _l2_refused(self, word):
                return None
            _aaa_line(self, word, args)
            return None

        def undo(self, *args):
            _no_aaa_line(self, word, args)
            return None
        return do, undo
    return {w: make(w) for w in ("dot1x", "authentication", "mab", "access-session")}


def install_preflight_features() -> None:
    """Patch the preflight features onto fake-switches' Cisco processors (called by :func:`install`)."""
    _orig.update({"cfg_do_vlan": ConfigCommandProcessor.do_vlan,
                  "if_do_channel_group": ConfigInterfaceCommandProcessor.do_channel_group,
                  "if_do_no_channel_group": ConfigInterfaceCommandProcessor.do_no_channel_group,
                  "if_do_ip": ConfigInterfaceCommandProcessor.do_ip,
                  "if_do_no_ip": ConfigInterfaceCommandProcessor.do_no_ip})
    ConfigCommandProcessor.do_vtp = cfg_do_vtp
    ConfigCommandProcessor.do_no_vtp = cfg_do_no_vtp
    ConfigCommandProcessor.do_spanning_tree = cfg_do_spanning_tree
    ConfigCommandProcessor.do_no_spanning_tree = cfg_do_no_spanning_tree
    ConfigCommandProcessor.do_vlan = cfg_do_vlan
    ConfigCommandProcessor.do_no_vlan = cfg_do_no_vlan
    ConfigCommandProcessor.do_mac = cfg_do_mac
    ConfigCommandProcessor.do_no_mac = cfg_do_no_mac
    ConfigInterfaceCommandProcessor.do_channel_group = if_do_channel_group
    ConfigInterfaceCommandProcessor.do_no_channel_group = if_do_no_channel_group
    ConfigInterfaceCommandProcessor.do_switchport = if_do_switchport_ext
    ConfigInterfaceCommandProcessor.do_no_switchport = if_do_no_switchport_ext
    ConfigInterfaceCommandProcessor.do_ip = if_do_ip
    ConfigInterfaceCommandProcessor.do_no_ip = if_do_no_ip
    ConfigInterfaceCommandProcessor.do_l2protocol_tunnel = if_do_l2protocol_tunnel
    ConfigInterfaceCommandProcessor.do_no_l2protocol_tunnel = if_do_no_l2protocol_tunnel
    for word, (do, undo) in _make_aaa_handlers().items():
        name = word.replace("-", "_")
        setattr(ConfigInterfaceCommandProcessor, f"do_{name}", do)
        setattr(ConfigInterfaceCommandProcessor, f"do_no_{name}", undo)
    EnabledCommandProcessor.do_show = do_show_ext


# ----------------------------------------------------------------------------- lab process
#: fake-switches model of the emulated Catalyst (FastEthernet0/1-24, GigabitEthernet0/1-2)
MODEL = "cisco_2960_24TT_L"


def serve(args, password: str, port_map: dict[str, str]) -> int:
    """Run the emulated IOS switch for ``python -m harmless.emulators.fakeswitch`` until SIGTERM.

    SSH on ``--listen-host:--listen-port`` (fake-switches' Twisted conch transport) with this module's
    extensions installed, the startup config applied, the fault-injection hooks set from ``args``, the OVS data
    plane kept in sync (:class:`harmless.emulators.dataplane.OvsSync`) and the mapped ports' link state polled
    every second (``show interfaces`` follows a pulled lab cable).

    Returns:
        Exit status (2: bad startup config or port map, 1: cannot listen, 0 after SIGTERM).
    """
    from fake_switches import switch_factory
    from fake_switches.transports.ssh_service import SwitchSshService
    from twisted.internet import reactor, task
    from twisted.internet.error import CannotListenError

    install()
    core = switch_factory.SwitchFactory().get(MODEL, args.hostname, password)  # enable secret: str
    sc = core.switch_configuration
    set_platform(sc, args.platform)
    set_session_port(sc, args.session_port)
    sc._archive_user = args.username             # who owns a commit-confirm (show archive config rollback timer)
    sc._new_processor = core.new_command_processor
    unknown = [i for i in port_map if sc.get_port(i) is None]
    if unknown:
        log.error("--port-map names interfaces the %s does not have: %s", MODEL, ", ".join(unknown))
        return 2
    if args.startup_config:
        proc = core.new_command_processor()
        quiet = logging.getLogger("harmless.emulators.ios.startup")
        quiet.setLevel(logging.WARNING)
        proc.init(sc, NoopTerminalController(), quiet, NotPipingProcessor())
        bad = apply_config_text(proc, args.startup_config.read_text())
        if bad:
            log.error("startup config %s: rejected lines: %s", args.startup_config, bad)
            return 2
        log.info("startup config %s applied", args.startup_config)
    sc._startup = running_config_text(sc)        # what `reload` boots from (`write memory` replaces it)
    set_reject_patterns(args.reject)
    set_drop_patterns(args.drop_session_on)
    set_minute_seconds(args.minute_seconds)
    set_fault_file(args.fault_file)
    if args.drop_session_on:
        log.info("fault injection: dropping the SSH session after exec commands matching %s", args.drop_session_on)
    if args.reject:
        log.info("fault injection: rejecting config lines matching %s", args.reject)

    status = {"hostname": args.hostname, "model": MODEL, "platform": args.platform, "listen_host": args.listen_host,
              "listen_port": args.listen_port, "pid": os.getpid(), "ovs": None}
    sync = None
    if args.ovs_db and port_map:
        def on_change(state):
            status["ovs"] = state
            write_json(args.status_file, status)

        sync = OvsSync(sc, port_map, args.ovs_db, on_change=on_change, bridge=args.bridge)
        rc, out = list_ports(args.ovs_db, args.bridge)
        missing = sorted(set(port_map.values()) - set(out.split())) if rc == 0 else []
        if rc != 0 or missing:
            log.warning("ovs: bridge %s: %s", args.bridge,
                        f"missing ports {missing}" if rc == 0 else f"cannot list ports ({out.strip()})")

    try:
        SwitchSshService(args.listen_host, port=args.listen_port, switch_core=core,
                         users={args.username: password.encode()}).hook_to_reactor(reactor)
    except CannotListenError as exc:
        log.error("cannot listen on %s:%s (%s)", args.listen_host, args.listen_port, exc.socketError)
        return 1
    if sync is not None:
        task.LoopingCall(sync.tick).start(args.sync_interval, now=True)

        def links():
            from twisted.internet import threads
            d = threads.deferToThread(sync.poll_links)
            d.addCallback(set_oper_down)
            d.addErrback(lambda f: log.error("ovs: link poll failed: %s", f.getErrorMessage()))
            return d
        task.LoopingCall(links).start(1.0, now=True)
    return run_reactor(reactor, args, status, f"listening on {args.listen_host}:{args.listen_port}")

