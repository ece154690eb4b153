"""Arista EOS emulation for the lab: what NAPALM ``eos`` (pyeapi over eAPI) needs, on fake-switches' model.

What fake-switches 1.5.0 itself offers for Arista (``arista_generic``, eAPI JSON-RPC over plain HTTP): ``show
vlan``, ``show interfaces [switchport]``, ``vlan N`` / ``name``, trunk-only ``switchport`` commands and a
running config with VLANs only. It has no ``show version`` (NAPALM ``open()`` fails), no ``switchport mode
access``/``access vlan``/``dot1q-tunnel``, no configuration sessions, no text diffs, no commit timer, no
``configure replace``, and its eAPI accepts any password. Its command processors are too thin to extend
one by one, so this module keeps fake-switches' configuration model (``SwitchConfiguration``/``Port``/``Vlan``,
which :mod:`harmless.emulators.dataplane` already mirrors onto OVS) and replaces the command side:

eAPI (``POST /command-api``, JSON-RPC 2.0, ``format`` json|text, HTTP basic auth checked)
    ``enable``, ``show version|hostname|interfaces|vlan|running-config|startup-config``,
    ``show configuration sessions [detail]``, ``show session-config named S [diffs]``,
    ``configure [session S]`` (+ config lines, ``end``), ``configure session S commit [timer hh:mm:ss]``,
    ``configure session S abort``, ``copy startup-config flash:F``, ``copy flash:F startup-config``,
    ``copy running-config startup-config``, ``write memory``, ``configure replace flash:F``, ``reload now``
    (:meth:`EosSwitch.reload`); files on ``flash:`` (``/mnt/flash`` to EOS's bash):
    ``more flash:F``, ``delete flash:F``, ``dir flash:``, and of EOS's ``bash [timeout N] <command>`` only the forms
    HARMLESS's driver sends (``echo <base64> | base64 -d > /mnt/flash/F``, ``>>`` to append, ``mv /mnt/flash/A
    /mnt/flash/B``); any other bash command is refused as not emulated.
config mode (running config or a session)
    ``hostname``, ``vlan LIST`` / ``name`` / ``no vlan``, ``interface X`` / ``description`` / ``shutdown`` /
    ``[no] switchport`` / ``switchport mode access|trunk|dot1q-tunnel`` / ``switchport access vlan`` /
    ``switchport trunk native vlan`` / ``switchport trunk allowed vlan [add|remove|except] LIST|all|none`` /
    ``switchport dot1q ethertype 0xHHHH`` and their ``no`` forms, ``rollback clean-config`` (sessions),
    ``ip access-list [standard] NAME`` with ``[seq] permit|deny|remark`` entries and their ``no`` forms,
    ``end``/``exit``; a line unknown in a sub-mode is retried at the global level (as EOS does); anything
    else is ``% Invalid input`` (eAPI error 1002), as are lines matching the ``reject`` patterns.

Sessions work as on EOS: a session is a private copy of the running config; a failed line leaves the
running config untouched; ``commit`` swaps it in atomically; ``commit timer`` swaps it in and reverts to the
previous config by itself when the timer expires unless the session is committed again (confirm);
``abort`` of a timer session reverts at once. The session diff is a unified diff of the two config texts.
"""
from __future__ import annotations

import base64
import copy
import difflib
import json
import logging
import re
import time
from collections.abc import Callable

from fake_switches.switch_configuration import Port, SwitchConfiguration, Vlan

from harmless.emulators import dataplane
from harmless.emulators.process import run_reactor, write_json
from harmless.switch_drivers.eos.vids import format_vid_ranges, parse_vid_ranges

log = logging.getLogger(__name__)

MODEL = "vEOS-lab"
VERSION = "4.30.1F"
N_PORTS = 26
INVALID = "invalid command"


class EapiError(Exception):
    """A command failed: eAPI error ``code`` with the device's ``errors`` text."""

    def __init__(self, message: str, code: int = 1002, errors: list[str] | None = None):
        super().__init__(message)
        self.code, self.errors = code, errors or [message]


def new_configuration(hostname: str, n_ports: int = N_PORTS) -> SwitchConfiguration:
    """A factory-default EOS switch: ``Ethernet1..n_ports`` (access VLAN 1), ``Management1``, VLAN 1."""
    sc = SwitchConfiguration("127.0.0.1", name=hostname,
                             ports=[Port(f"Ethernet{i}") for i in range(1, n_ports + 1)] + [Port("Management1")])
    sc.add_vlan(Vlan(1, "default", switch_configuration=sc))
    sc.get_port("Management1").vendor_specific["routed"] = True
    return sc


def reset_configuration(sc: SwitchConfiguration) -> None:
    """``rollback clean-config``: every port back to default, only VLAN 1."""
    for p in sc.ports:
        routed = p.name.startswith("Management")
        p.reset()
        if routed:
            p.vendor_specific["routed"] = True
    sc.vlans = [v for v in sc.vlans if v.number == 1]
    for v in sc.vlans:
        v.name = "default"
    sc.ports = [p for p in sc.ports if not p.name.startswith("Port-Channel")]
    sc._mlag = {}
    sc._acls = {}


def copy_state(dst: SwitchConfiguration, src: SwitchConfiguration) -> None:
    """Make ``dst`` hold ``src``'s config (keeps the ``dst`` object, which the OVS sync watches)."""
    c = copy.deepcopy(src)
    dst.name, dst.vlans, dst.ports = c.name, c.vlans, c.ports
    dst._mlag = dict(getattr(c, "_mlag", {}))
    dst._acls = dict(getattr(c, "_acls", {}))
    for o in dst.vlans + dst.ports:
        o.switch_configuration = dst


# ----------------------------------------------------------------------------- running config (text)
def _port_sort_key(name: str):
    m = re.match(r"([A-Za-z\-]+)(\d+)", name)
    order = {"Ethernet": 0, "Port-Channel": 1, "Management": 2}
    return (order.get(m.group(1), 3), int(m.group(2))) if m else (9, 0)


def interface_lines(p: Port) -> list[str]:
    """One interface block as EOS prints it (3-space indentation, defaults omitted)."""
    out = [f"interface {p.name}"]
    if p.description:
        out.append(f"   description {p.description}")
    if p.shutdown:
        out.append("   shutdown")
    if p.vendor_specific.get("routed"):
        if not p.name.startswith("Management"):
            out.append("   no switchport")
        if p.vendor_specific.get("ip"):
            out.append(f"   ip address {p.vendor_specific['ip']}")
        return out
    if p.access_vlan and p.access_vlan != 1:
        out.append(f"   switchport access vlan {p.access_vlan}")
    if p.trunk_native_vlan and p.trunk_native_vlan != 1:
        out.append(f"   switchport trunk native vlan {p.trunk_native_vlan}")
    if p.trunk_vlans is not None:
        out.append(f"   switchport trunk allowed vlan {format_vid_ranges(p.trunk_vlans)}")
    if p.mode in ("trunk", "dot1q-tunnel"):
        out.append(f"   switchport mode {p.mode}")
    tpid = p.vendor_specific.get("tpid")
    if tpid and tpid != 0x8100:
        out.append(f"   switchport dot1q ethertype {tpid:#06x}")
    if p.vendor_specific.get("no_learning"):
        out.append("   no switchport mac address learning")
    out += [f"   {ln}" for ln in p.vendor_specific.get("features", [])]
    if p.vendor_specific.get("channel"):
        out.append("   channel-group %s mode %s" % p.vendor_specific["channel"])
    return out


def running_config_text(sc: SwitchConfiguration) -> str:
    """``show running-config`` text: header, hostname, VLANs (numeric order), every interface, ``end``."""
    lines = ["! Command: show running-config", f"! device: {sc.name} ({MODEL}, EOS-{VERSION})", "!",
             "! boot system flash:/vEOS-lab.swi", "!", f"hostname {sc.name}", "!"]
    for v in sorted(sc.vlans, key=lambda v: v.number):
        if v.number == 1 and (v.name or "default") == "default":
            continue
        lines.append(f"vlan {v.number}")
        if v.name and v.name != f"VLAN{v.number:04d}":
            lines.append(f"   name {v.name}")
        lines.append("!")
    for p in sorted(sc.ports, key=lambda p: _port_sort_key(p.name)):
        lines += interface_lines(p) + ["!"]
    for (kind, name), entries in getattr(sc, "_acls", {}).items():
        lines += [f"ip access-list {'standard ' if kind == 'standard' else ''}{name}"]
        lines += [f"   {seq} {text}" for seq, text in sorted(entries)] + ["!"]
    mlag = getattr(sc, "_mlag", {})
    if mlag:
        lines += ["mlag configuration"] + [f"   {k} {mlag[k]}" for k in _MLAG_KEYS if k in mlag] + ["!"]
    return "\n".join(lines + ["end", ""])


#: ``mlag configuration`` settings, in the order EOS prints them
_MLAG_KEYS = ("domain-id", "local-interface", "peer-address", "peer-link")
#: port lines kept verbatim (802.1X, MAB, phone VLAN, port security), one per setting
_FEATURE = re.compile(r"^(dot1x (pae authenticator|port-control \S+|host-mode \S+|mac based authentication)|"
                      r"switchport phone vlan \d+|switchport phone trunk \S+|"
                      r"switchport port-security( mac-address maximum \d+)?)$")


# ----------------------------------------------------------------------------- named IP access lists
# Arista EOS User Manual, "ACL configuration": ``ip access-list [standard] NAME`` enters the ACL mode; ``[seq]
# permit|deny|remark ...`` adds an entry (without a sequence number: the last one + 10), ``no SEQ`` or ``no <entry>``
# deletes one; ``show running-config`` lists each entry with its sequence number (``   10 permit ip any any``), the
# lists after the interfaces.
def _acl_line(entries: list[tuple[int, str]], s: str) -> bool:
    """Apply one ACL-mode line to ``entries`` (``[(seq, text)]``); False when it is not an ACL-mode line."""
    w = s.split()
    neg = w[0] == "no"
    body = w[1:] if neg else w
    if not body or not (body[0] in ("permit", "deny", "remark") or body[0].isdigit()):
        return False
    if neg:
        rest = " ".join(body)
        entries[:] = [(n, e) for n, e in entries if e != rest and str(n) != rest]
        return True
    seq = int(body[0]) if body[0].isdigit() else max((n for n, _e in entries), default=0) + 10
    text = " ".join(body[1:] if body[0].isdigit() else body)
    if not text:
        return False
    entries[:] = sorted([(n, e) for n, e in entries if n != seq] + [(seq, text)])
    return True


# ----------------------------------------------------------------------------- config mode
class ConfigMode:
    """Applies EOS config lines to one ``SwitchConfiguration`` (the running config or a session's copy).

    Args:
        sc: the configuration to change.
        reject: ``re.search`` patterns of lines to refuse (fault injection).
        in_session: ``rollback clean-config`` is only valid in a session.
    """

    def __init__(self, sc: SwitchConfiguration, reject: list[re.Pattern], in_session: bool):
        self.sc, self.reject, self.in_session = sc, reject, in_session
        self.ctx: tuple[str, object] | None = None

    def line(self, text: str) -> bool:
        """Apply one line. Returns False when the line leaves config mode (``end``). Raises EapiError."""
        s = " ".join(text.split())
        if not s or s.startswith("!"):
            return True
        if any(p.search(s) for p in self.reject):
            raise EapiError(INVALID, errors=[f"% Invalid input (rejected: {s})"])
        if s == "end":
            self.ctx = None
            return False
        if s == "exit":
            self.ctx = None
            return True
        if self.ctx is not None and self._sub(s):
            return True
        self.ctx = None
        self._global(s)
        return True

    # global level
    def _global(self, s: str) -> None:
        w = s.split()
        sc = self.sc
        if w[0] == "hostname" and len(w) == 2:
            sc.name = w[1]
        elif w[0] == "vlan" and len(w) == 2:
            vids = self._vids(w[1])
            for vid in vids:
                if sc.get_vlan(vid) is None:
                    sc.add_vlan(Vlan(vid, None, switch_configuration=sc))
            self.ctx = ("vlan", vids)
        elif w[:2] == ["no", "vlan"] and len(w) == 3:
            for vid in self._vids(w[2]):
                v = sc.get_vlan(vid)
                if v is not None and vid != 1:
                    sc.remove_vlan(v)
        elif w[0] == "interface" and len(w) == 2:
            p = self._port(w[1])
            self.ctx = ("interface", p)
        elif w[:2] == ["default", "interface"] and len(w) == 3:
            p = self._port(w[2])
            routed = p.name.startswith("Management")
            p.reset()
            p.vendor_specific["routed"] = routed or None
        elif s == "rollback clean-config" and self.in_session:
            reset_configuration(sc)
        elif s == "mlag configuration":
            if not hasattr(sc, "_mlag"):
                sc._mlag = {}
            self.ctx = ("mlag", sc._mlag)
        elif s == "no mlag configuration":
            sc._mlag = {}
        elif m := re.match(r"(no )?ip access-list (standard )?(\S+)$", s):
            key = ("standard" if m.group(2) else "extended", m.group(3))
            acls = sc.__dict__.setdefault("_acls", {})
            if m.group(1):
                acls.pop(key, None)
            else:
                acls.setdefault(key, [])
                self.ctx = ("acl", acls[key])
        elif s.startswith("spanning-tree mode ") or s == "no aaa root":
            pass                                              # accepted, not modelled
        else:
            raise EapiError(INVALID, errors=["% Invalid input"])

    def _vids(self, spec: str) -> tuple[int, ...]:
        try:
            vids = parse_vid_ranges(spec)
        except ValueError:
            raise EapiError(INVALID, errors=["% Invalid input"]) from None
        if not vids:
            raise EapiError(INVALID, errors=["% Invalid input"])
        return vids

    def _port(self, name: str) -> Port:
        m = re.match(r"(?i)(et|eth|ethernet|ma|management|po|port-channel)(\d+)$", name)
        if not m:
            raise EapiError(INVALID, errors=["% Invalid input"])
        full = {"et": "Ethernet", "eth": "Ethernet", "ethernet": "Ethernet", "ma": "Management",
                "management": "Management", "po": "Port-Channel", "port-channel": "Port-Channel"}[m.group(1).lower()]
        name = f"{full}{m.group(2)}"
        p = self.sc.get_port(name)
        if p is None and full == "Port-Channel":
            p = Port(name)
            self.sc.add_port(p)
        if p is None:
            raise EapiError(INVALID, errors=[f"% Interface {name} does not exist"])
        return p

    # sub-modes
    def _sub(self, s: str) -> bool:
        kind, obj = self.ctx
        if kind == "acl":
            return _acl_line(obj, s)
        if kind == "mlag":
            m = re.match(r"(no )?(domain-id|local-interface|peer-address|peer-link)(?: (\S+))?$", s)
            if not m:
                return False
            if m.group(1):
                obj.pop(m.group(2), None)
            elif m.group(3):
                obj[m.group(2)] = m.group(3)
            return True
        if kind == "vlan":
            m = re.match(r"(no )?name( (\S+))?$", s)
            if m and (m.group(1) or m.group(3)):
                for vid in obj:
                    self.sc.get_vlan(vid).name = None if m.group(1) else m.group(3)
                return True
            return s in ("state active", "no state")
        return self._interface(obj, s)

    def _interface(self, p: Port, s: str) -> bool:
        vs = p.vendor_specific
        if m := re.match(r"description (.+)$", s):
            p.description = m.group(1)
        elif s == "no description":
            p.description = None
        elif s in ("shutdown", "no shutdown"):
            p.shutdown = True if s == "shutdown" else None
        elif s in ("switchport", "no switchport"):
            if p.name.startswith("Management"):
                raise EapiError(INVALID, errors=["% Invalid input"])
            vs["routed"] = True if s == "no switchport" else None
        elif m := re.match(r"switchport mode (access|trunk|dot1q-tunnel)$", s):
            p.mode = None if m.group(1) == "access" else m.group(1)
        elif s == "no switchport mode":
            p.mode = None
        elif m := re.match(r"switchport access vlan (\d+)$", s):
            p.access_vlan = self._one_vid(m.group(1))
        elif s.startswith("no switchport access vlan"):
            p.access_vlan = None
        elif m := re.match(r"switchport trunk native vlan (\d+)$", s):
            p.trunk_native_vlan = self._one_vid(m.group(1))
        elif s.startswith("no switchport trunk native vlan"):
            p.trunk_native_vlan = None
        elif m := re.match(r"switchport trunk allowed vlan (?:(add|remove|except) )?(\S+)$", s):
            self._allowed(p, m.group(1), m.group(2))
        elif s == "no switchport trunk allowed vlan":
            p.trunk_vlans = None
        elif m := re.match(r"channel-group (\d+) mode (on|active|passive)$", s):
            self._port(f"Port-Channel{m.group(1)}")
            vs["channel"] = (m.group(1), m.group(2))
        elif s == "no channel-group":
            vs.pop("channel", None)
        elif m := re.match(r"ip address (\d+\.\d+\.\d+\.\d+/\d+)$", s):
            if not vs.get("routed"):
                raise EapiError(INVALID, errors=["% Address determination: interface is not a routed port"])
            vs["ip"] = m.group(1)
        elif s == "no ip address":
            vs.pop("ip", None)
        elif _FEATURE.match(s) or (s.startswith("no ") and _FEATURE.match(s[3:])):
            feats = vs.setdefault("features", [])
            line = s[3:] if s.startswith("no ") else s
            key = line.split()[:3] if not line.startswith("switchport port-security") else line.split()[:3]
            feats[:] = [f for f in feats if f.split()[:3] != key]
            if not s.startswith("no "):
                feats.append(line)
        elif s in ("switchport mac address learning", "no switchport mac address learning"):
            vs["no_learning"] = True if s.startswith("no ") else None    # EOS: learning per interface, on by default
        elif m := re.match(r"switchport dot1q ethertype (0x[0-9a-fA-F]{4})$", s):
            vs["tpid"] = int(m.group(1), 16)
        elif s == "no switchport dot1q ethertype":
            vs.pop("tpid", None)
        else:
            return False
        if p.vendor_specific.get("routed") and s.startswith("switchport "):
            raise EapiError(INVALID, errors=["% Interface is not a switched port"])
        return True

    def _one_vid(self, text: str) -> int:
        vid = int(text)
        if not 1 <= vid <= 4094:
            raise EapiError(INVALID, errors=["% Invalid input"])
        return vid

    def _allowed(self, p: Port, op: str | None, spec: str) -> None:
        try:
            vids = parse_vid_ranges(spec)
        except ValueError:
            raise EapiError(INVALID, errors=["% Invalid input"]) from None
        cur = None if p.trunk_vlans is None else set(p.trunk_vlans)
        every = set(range(1, 4095))
        if op is None:
            new = None if vids is None else set(vids)
        elif op == "add":
            new = None if cur is None or vids is None else cur | set(vids)
        elif op == "remove":
            new = (every if cur is None else cur) - set(vids or every)
        else:
            new = every - set(vids or ())
        p.trunk_vlans = None if new is None or new == every else sorted(new)


# ----------------------------------------------------------------------------- the device
class EosSwitch:
    """One emulated EOS switch: running/startup config, flash, configuration sessions, commit timers.

    Args:
        sc: the running configuration (fake-switches model; watched by the OVS sync).
        schedule: ``schedule(seconds, fn)`` runs ``fn`` later and returns an object with ``cancel()``
            (the Twisted reactor's ``callLater`` in the lab process).
        reject: regexes of config lines to refuse (fault injection).
        drop_after: regex of a command after which the next reply is dropped once (lost session).
        link_up: ``{interface: bool}`` operational link (default up), e.g. mirrored from the lab's OVS.
    """

    def __init__(self, sc: SwitchConfiguration, schedule: Callable, reject: list[str] = (),
                 drop_after: str | None = None):
        self.sc, self.schedule = sc, schedule
        self.reject = [re.compile(r) for r in reject]
        self.drop_after = re.compile(drop_after) if drop_after else None
        self.booted = time.time()
        self.startup = running_config_text(sc)
        self.flash: dict[str, str] = {}
        self.sessions: dict[str, dict] = {}
        self.link_up: dict[str, bool] = {}
        self.on_change: Callable[[], None] = lambda: None

    def uptime(self) -> float:
        return time.time() - self.booted

    # ---- sessions
    def _session(self, name: str) -> dict:
        s = self.sessions.get(name)
        if s is None:
            raise EapiError("could not run command", code=1000, errors=[f"% Session {name} does not exist"])
        return s

    def _commit(self, name: str, timer: float | None) -> None:
        s = self._session(name)
        if s["state"] == "pendingCommitTimer":
            if timer is not None:
                raise EapiError("could not run command", 1000, ["% A commit timer is already pending"])
            s["timer"].cancel()
            s["state"] = "completed"
            log.info("session %s: commit confirmed", name)
            return
        if s["state"] != "pending":
            raise EapiError("could not run command", 1000, [f"% Session {name} is {s['state']}"])
        s["before"] = copy.deepcopy(self.sc)
        copy_state(self.sc, s["sc"])
        self.on_change()
        if timer is None:
            s["state"] = "completed"
            log.info("session %s: committed", name)
        else:
            s["state"] = "pendingCommitTimer"
            s["commit_by"] = self.uptime() + timer
            s["timer"] = self.schedule(timer, lambda: self._expire(name))
            log.info("session %s: committed with a %.0f s commit timer", name, timer)

    def _expire(self, name: str) -> None:
        s = self.sessions.get(name)
        if s and s["state"] == "pendingCommitTimer":
            copy_state(self.sc, s["before"])
            s["state"] = "aborted"
            self.on_change()
            log.warning("session %s: commit timer expired, previous configuration restored", name)

    def _abort(self, name: str) -> None:
        s = self._session(name)
        if s["state"] == "pendingCommitTimer":
            s["timer"].cancel()
            copy_state(self.sc, s["before"])
            self.on_change()
        elif s["state"] != "pending":
            raise EapiError("could not run command", 1000, [f"% Session {name} is {s['state']}"])
        s["state"] = "aborted"

    def reload(self) -> None:
        """``reload now``: the switch restarts with its startup config (Arista EOS User Manual, "System Reset":
        ``reload`` resets the switch, ending every CLI session; it boots from startup-config). Here instantly:
        configuration sessions (and their commit timers) are gone, the running config is the startup config and the
        uptime starts again. Unsaved changes are lost, as on the real switch with ``reload now``."""
        for s in self.sessions.values():
            if s.get("state") == "pendingCommitTimer":
                s["timer"].cancel()
        self.sessions.clear()
        new = copy.deepcopy(self.sc)
        reset_configuration(new)
        cm = ConfigMode(new, [], False)
        for line in self.startup.splitlines():
            try:
                if not cm.line(line):
                    break
            except EapiError:
                log.error("reload: startup config line refused: %s", line.strip())
        copy_state(self.sc, new)
        self.booted = time.time()
        self.on_change()
        log.warning("reload: the running config is the startup config again")

    # ---- eAPI request
    def execute(self, cmds: list, fmt: str = "json") -> tuple[list[dict], EapiError | None, int, bool]:
        """Run one eAPI request.

        Returns:
            ``(results, error, failed_index, drop)``: results of the commands that ran, the error of the
            command at ``failed_index`` (None when all ran), and whether the reply must be dropped.
        """
        results: list[dict] = []
        mode: ConfigMode | None = None
        session: str | None = None
        drop = False
        for i, c in enumerate(cmds):
            cmd = c["cmd"] if isinstance(c, dict) else c
            try:
                if mode is not None:
                    if not mode.line(cmd):
                        mode, session = None, None
                    results.append({})
                else:
                    out, mode, session = self._exec(" ".join(cmd.split()), fmt)
                    results.append(out)
            except EapiError as e:
                return results, e, i, False
            if self.drop_after is not None and self.drop_after.search(cmd):
                self.drop_after, drop = None, True
        return results, None, -1, drop

    def _text(self, fmt: str, text: str, obj: dict | None = None) -> dict:
        return {"output": text} if fmt == "text" else (obj if obj is not None else {})

    def _exec(self, cmd: str, fmt: str):
        """One enable-mode command. Returns ``(result, config mode or None, session name or None)``."""
        sc = self.sc
        if cmd in ("enable", "disable", "terminal length 0", "terminal width 32767"):
            return {} if fmt == "json" else {"output": ""}, None, None
        if cmd in ("configure", "configure terminal"):
            return {}, ConfigMode(sc, self.reject, False), None
        if m := re.match(r"configure session (\S+)$", cmd):
            name = m.group(1)
            s = self.sessions.get(name)
            if s is None:
                s = self.sessions[name] = {"sc": copy.deepcopy(sc), "state": "pending"}
            elif s["state"] != "pending":
                raise EapiError("could not run command", 1000, [f"% Cannot enter session {name} ({s['state']})"])
            return {}, ConfigMode(s["sc"], self.reject, True), name
        if m := re.match(r"configure session (\S+) commit(?: timer (\d+):(\d\d):(\d\d))?$", cmd):
            timer = None if m.group(2) is None else int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))
            self._commit(m.group(1), timer)
            return self._text(fmt, ""), None, None
        if m := re.match(r"configure session (\S+) abort$", cmd):
            self._abort(m.group(1))
            return self._text(fmt, ""), None, None
        if m := re.match(r"configure replace flash:(\S+)$", cmd):
            text = self.flash.get(m.group(1))
            if text is None:
                raise EapiError("could not run command", 1000, [f"% Error opening flash:{m.group(1)}"])
            new = copy.deepcopy(sc)
            reset_configuration(new)
            cm = ConfigMode(new, self.reject, True)
            for line in text.splitlines():
                if not cm.line(line):
                    break
            copy_state(sc, new)
            self.on_change()
            return self._text(fmt, ""), None, None
        if m := re.match(r"copy startup-config flash:(\S+)$", cmd):
            self.flash[m.group(1)] = self.startup
            return self._text(fmt, "Copy completed successfully."), None, None
        if m := re.match(r"copy flash:(\S+) startup-config$", cmd):
            if m.group(1) not in self.flash:
                raise EapiError("could not run command", 1000, [f"% Error opening flash:{m.group(1)}"])
            self.startup = self.flash[m.group(1)]
            return self._text(fmt, "Copy completed successfully."), None, None
        if cmd in ("reload now", "reload force now", "reload now force"):
            self.reload()
            return self._text(fmt, ""), None, None
        if cmd in ("write memory", "write", "copy running-config startup-config"):
            self.startup = running_config_text(sc)
            return self._text(fmt, "Copy completed successfully."), None, None
        if cmd == "show running-config":
            return self._text(fmt, running_config_text(sc), {"cmds": {}}), None, None
        if cmd.startswith(("more ", "delete ", "dir", "bash ")):
            return self._files(cmd, fmt), None, None
        if cmd == "show startup-config":
            return self._text(fmt, self.startup), None, None
        if m := re.match(r"show session-config named (\S+)( diffs)?$", cmd):
            s = self._session(m.group(1))
            new = running_config_text(s["sc"])
            if not m.group(2):
                return self._text(fmt, new), None, None
            diff = difflib.unified_diff(running_config_text(sc).splitlines(), new.splitlines(),
                                        "system:/running-config", f"session:/{m.group(1)}-session-config",
                                        lineterm="")
            return {"output": "\n".join(diff) + "\n"}, None, None
        if m := re.match(r"show configuration sessions( detail)?$", cmd):
            out = {}
            for name, s in self.sessions.items():
                d = {"state": s["state"], "description": "", "instances": {}}
                if s["state"] == "pendingCommitTimer":
                    d["commitBy"] = s["commit_by"]
                out[name] = d
            return {"sessions": out, "maxSavedSessions": 1, "maxOpenSessions": 5}, None, None
        if cmd == "show version":
            return {"modelName": MODEL, "internalVersion": f"{VERSION}-lab", "version": VERSION,
                    "serialNumber": f"HL{sc.name.upper()}", "systemMacAddress": "02:1c:73:00:00:01",
                    "hardwareRevision": "", "architecture": "x86_64", "memTotal": 2000000, "memFree": 1000000,
                    "bootupTimestamp": self.booted, "uptime": self.uptime(), "isIntlVersion": False}, None, None
        if cmd == "show hostname":
            return {"hostname": sc.name, "fqdn": sc.name}, None, None
        if cmd == "show interfaces":
            return {"interfaces": self._interfaces_json()}, None, None
        if cmd == "show vlan":
            return {"vlans": self._vlans_json(), "sourceDetail": ""}, None, None
        raise EapiError(INVALID, errors=["% Invalid input"])

    _BASH_WRITE = re.compile(r"bash (?:timeout \d+ )?echo ([A-Za-z0-9+/=]*) \| base64 -d (>>?) /mnt/flash/([\w.-]+)$")
    _BASH_MV = re.compile(r"bash (?:timeout \d+ )?mv /mnt/flash/([\w.-]+) /mnt/flash/([\w.-]+)$")

    def _files(self, cmd: str, fmt: str) -> dict:
        """``more``/``delete``/``dir`` on ``flash:`` and the bash forms that write a file (see the module doc)."""
        fl = self.flash
        if m := re.match(r"more flash:/?(\S+)$", cmd):
            if m.group(1) not in fl:
                raise EapiError("could not run command", 1000,
                                [f"% Error opening flash:/{m.group(1)} (No such file or directory)"])
            return self._text(fmt, fl[m.group(1)])
        if m := re.match(r"delete flash:/?(\S+)$", cmd):
            if fl.pop(m.group(1), None) is None:
                raise EapiError("could not run command", 1000,
                                [f"% Error deleting flash:/{m.group(1)} (No such file or directory)"])
            return self._text(fmt, "")
        if cmd in ("dir", "dir flash:", "dir flash:/"):
            rows = [f"       -rwx {len(t.encode()):12d}  Jan  1 00:00  {n}" for n, t in sorted(fl.items())]
            return self._text(fmt, "Directory of flash:/\n\n" + "\n".join(rows) + "\n")
        if m := self._BASH_WRITE.match(cmd):
            data = base64.b64decode(m.group(1)).decode()
            fl[m.group(3)] = (fl.get(m.group(3), "") if m.group(2) == ">>" else "") + data
            return self._text(fmt, "")
        if m := self._BASH_MV.match(cmd):
            if m.group(1) not in fl:
                raise EapiError("could not run command", 1000, [f"mv: cannot stat '/mnt/flash/{m.group(1)}'"])
            fl[m.group(2)] = fl.pop(m.group(1))
            return self._text(fmt, "")
        raise EapiError(INVALID, errors=[f"% this emulator does not run: {cmd[:60]}"])

    def _interfaces_json(self) -> dict:
        out = {}
        for i, p in enumerate(sorted(self.sc.ports, key=lambda p: _port_sort_key(p.name))):
            link = self.link_up.get(p.name, True)
            status = "disabled" if p.shutdown else ("connected" if link else "notconnect")
            mgmt = p.name.startswith("Management")
            out[p.name] = {"name": p.name, "lineProtocolStatus": "up" if status == "connected" else "down",
                           "interfaceStatus": status, "description": p.description or "",
                           "mtu": 1500 if mgmt else 9214, "bandwidth": 1000000000,
                           "physicalAddress": f"02:1c:73:00:01:{i + 1:02x}", "lastStatusChangeTimestamp": self.booted,
                           "forwardingModel": "routed" if p.vendor_specific.get("routed") else "bridged",
                           "hardware": "ethernet"}
        return out

    def _vlans_json(self) -> dict:
        members: dict[int, dict] = {v.number: {} for v in self.sc.vlans}
        for p in self.sc.ports:
            if p.vendor_specific.get("routed"):
                continue
            if p.mode == "trunk":
                vids = range(1, 4095) if p.trunk_vlans is None else p.trunk_vlans
            else:
                vids = [p.access_vlan or 1]
            for vid in vids:
                if vid in members:
                    members[vid][p.name] = {"privatePromoted": False, "blocked": None}
        return {str(v.number): {"name": v.name or f"VLAN{v.number:04d}", "status": "active",
                                "interfaces": members[v.number], "dynamic": False}
                for v in sorted(self.sc.vlans, key=lambda v: v.number)}


def apply_startup(sw: EosSwitch, text: str) -> list[str]:
    """Apply startup-config text to the running config (then it is also the startup config).

    Returns:
        The rejected lines (empty when all were accepted).
    """
    cm = ConfigMode(sw.sc, [], False)
    bad = []
    for line in text.splitlines():
        try:
            if not cm.line(line):
                break
        except EapiError:
            bad.append(line.strip())
    sw.startup = running_config_text(sw.sc)
    return bad


# ----------------------------------------------------------------------------- HTTP (Twisted)
def eapi_resource(sw: EosSwitch, username: str, password: str):
    """A Twisted ``Resource`` tree serving ``POST /command-api`` for ``sw`` (HTTP basic auth)."""
    from twisted.web import resource

    expected = "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()

    class CommandApi(resource.Resource):
        isLeaf = True

        def render_POST(self, request):
            if (request.getHeader("authorization") or "") != expected:
                request.setResponseCode(401, b"Unauthorized")
                return b'{"error": "Unauthorized"}'
            try:
                req = json.loads(request.content.read().decode())
                params = req["params"]
                cmds, fmt = params["cmds"], params.get("format", "json")
            except (ValueError, KeyError, TypeError):
                request.setResponseCode(400)
                return b'{"error": "bad request"}'
            results, err, idx, drop = sw.execute(cmds, fmt)
            if drop:
                log.warning("fault injection: dropping the reply (lost session)")
                request.channel.transport.abortConnection()
                from twisted.web.server import NOT_DONE_YET
                return NOT_DONE_YET
            reply = {"jsonrpc": "2.0", "id": req.get("id")}
            if err is None:
                reply["result"] = results
            else:
                cmd = cmds[idx]["cmd"] if isinstance(cmds[idx], dict) else cmds[idx]
                data = results + [{"errors": err.errors}]
                reply["error"] = {"code": err.code, "data": data,
                                  "message": f"CLI command {idx + 1} of {len(cmds)} '{cmd}' failed: {err}"}
                log.info("eAPI: %s", reply["error"]["message"])
            request.setHeader(b"content-type", b"application/json")
            return json.dumps(reply).encode()

    root = resource.Resource()
    root.putChild(b"command-api", CommandApi())
    return root


# ----------------------------------------------------------------------------- data plane (pure)
def desired_ovs_ports(sc: SwitchConfiguration, port_map: dict[str, str]) -> dict[str, dict]:
    """Like :func:`harmless.emulators.dataplane.desired_ovs_ports`, plus the outer TPID of dot1q-tunnel ports.

    On EOS the S-tag TPID is a property of the trunk (``switchport dot1q ethertype``, default 0x8100); OVS sets
    it on the tunnel port (``other_config:qinq-ethtype``, default 802.1ad = 0x88a8). A tunnel port gets
    ``802.1ad`` when a trunk carrying its VLAN uses 0x88a8, else ``802.1q``.

    Returns:
        ``{ovs port: {"vlan_mode", "tag", "trunks"[, "qinq_ethtype"]}}``.
    """
    out = dataplane.desired_ovs_ports(sc, port_map)
    trunks = [p for p in sc.ports if p.mode == "trunk" and not p.vendor_specific.get("routed")]
    for iface, ovs_name in port_map.items():
        p = sc.get_port(iface)
        if out[ovs_name]["vlan_mode"] != "dot1q-tunnel":
            continue
        vid = p.access_vlan or 1
        ad = any(t.vendor_specific.get("tpid") == 0x88A8 and (t.trunk_vlans is None or vid in t.trunk_vlans)
                 for t in trunks)
        out[ovs_name]["qinq_ethtype"] = "802.1ad" if ad else "802.1q"
    return out


# ----------------------------------------------------------------------------- lab process
def serve(args, password: str, port_map: dict[str, str]) -> int:
    """Run the emulated EOS switch for ``python -m harmless.emulators.fakeswitch --vendor eos`` until SIGTERM.

    eAPI over plain HTTP on ``--listen-host:--listen-port`` (NAPALM ``optional_args={"transport": "http"}``);
    startup config, OVS sync (:func:`desired_ovs_ports`: dot1q-tunnel ports get the trunk's S-tag TPID),
    ``--reject``, status and pid files as for the IOS lab switch; ``--drop-after``
    drops the reply to the first request that ran a matching command (a session lost mid-commit). The
    operational link state of mapped ports follows their OVS interfaces (``link_state``), so pulling a lab
    host's cable shows up in ``show interfaces``.

    Returns:
        Exit status (2: bad startup config or port map, 1: cannot listen).
    """
    import os

    from twisted.internet import reactor, task, threads
    from twisted.internet.error import CannotListenError
    from twisted.web.server import Site

    sc = new_configuration(args.hostname)
    unknown = [i for i in port_map if sc.get_port(i) is None]
    if unknown:
        log.error("--port-map names interfaces the %s does not have: %s", MODEL, ", ".join(unknown))
        return 2
    sw = EosSwitch(sc, schedule=reactor.callLater, reject=args.reject, drop_after=args.drop_after)
    if args.startup_config:
        bad = apply_startup(sw, args.startup_config.read_text())
        if bad:
            log.error("startup config %s: rejected lines: %s", args.startup_config, bad)
            return 2
        log.info("startup config %s applied", args.startup_config)
    if args.reject:
        log.info("fault injection: rejecting config lines matching %s", args.reject)

    status = {"hostname": args.hostname, "model": MODEL, "vendor": "eos", "listen_host": args.listen_host,
              "listen_port": args.listen_port, "pid": os.getpid(), "ovs": None}
    if args.ovs_db and port_map:
        def on_change(state):
            status["ovs"] = state
            write_json(args.status_file, status)

        sync = dataplane.OvsSync(sc, port_map, args.ovs_db, on_change=on_change, bridge=args.bridge)
        sync.pending = lambda: {p: st for p, st in desired_ovs_ports(sc, port_map).items()
                                if sync.applied.get(p) != st}
        by_ovs = {v: k for k, v in port_map.items()}
        busy = {"link": False}

        def poll_links():
            if busy["link"]:
                return
            busy["link"] = True
            d = threads.deferToThread(dataplane.ovs_link_states, args.ovs_db, list(by_ovs))

            def done(states):
                busy["link"] = False
                if states is not None:
                    sw.link_up = {by_ovs[n]: up for n, up in states.items() if n in by_ovs}

            d.addBoth(done)

        task.LoopingCall(sync.tick).start(args.sync_interval, now=True)
        task.LoopingCall(poll_links).start(max(args.sync_interval, 0.5), now=True)
    try:
        reactor.listenTCP(args.listen_port, Site(eapi_resource(sw, args.username, password)),
                          interface=args.listen_host)
    except CannotListenError as exc:
        log.error("cannot listen on %s:%s (%s)", args.listen_host, args.listen_port, exc.socketError)
        return 1
    return run_reactor(reactor, args, status, f"eAPI on http://{args.listen_host}:{args.listen_port}/command-api")
