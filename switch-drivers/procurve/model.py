"""The per-port model (:class:`~harmless.switch_drivers.portmodel.SwitchModel`) of a ProCurve / ArubaOS-Switch
running config (pure), and the one block parser of that syntax (:func:`parse_blocks`, also behind
:func:`.parse.parse_config`).

ProCurve configuration is VLAN-centric: ``vlan 10`` / ``untagged 1-4,Trk1`` / ``tagged 24`` / ``exit``. Contexts
(``vlan N``, ``interface X``, ``oobm``, ``router ...``, ...) end with ``exit``; a config pasted without its
indentation therefore reads the same as the indented one (the parser follows ``exit`` and context openers, and
indentation only where there is some).

Port names: ``7`` (fixed ports), ``A1`` (chassis module A, e.g. 5406zl), ``1/A1`` (VSF / stack member 1, module A),
``1/7`` (2920/2930F stack member 1, port 7), ``C1i`` (a module's interconnect port on a 5400R chassis: a lower-case
suffix after the number), ``1/1/1`` (member/slot/port, ArubaOS-CX style), ``Trk1`` (a trunk = LAG). Port lists:
``1-6,8,A1-A4,Trk1``; a range joins names that differ only in the number (``C1i-C4i``). An item the reader cannot
read (``B1-16``, ``A1, A2`` with a space) is listed in the switch's ``unparsed`` with the reason, never dropped.

How each field is filled (ProCurve semantics, from the ArubaOS-Switch Advanced Traffic Management and Access
Security guides):

- ``mode``: from VLAN membership. Tagged in a VLAN other than a ``voice`` VLAN → ``trunk`` (``native_vid`` = its
  untagged VLAN, None with ``no untagged``; ``allowed_vids`` = every VLAN it is tagged in); untagged in one VLAN
  (and tagged in none, or only in ``voice`` VLANs) → ``access`` (``voice_vid`` = that voice VLAN: an IP phone's
  tagged VLAN beside the PC's untagged one); in no VLAN → ``unknown`` (e.g. a trunk member, whose VLANs are on the
  ``TrkN``).
- ``lag``: ``trunk 23-24 trk1 lacp`` makes 23 and 24 members of ``Trk1`` (``trunk``/``lacp``/``dt-lacp``/
  ``dt-trunk``); ``is_lag``: ``TrkN``.
- ``dot1x``: ``aaa port-access authenticator LIST`` (802.1X), ``aaa port-access mac-based LIST`` (MAC auth),
  ``aaa port-access web-based LIST``, also inside ``interface X``.
- ``port_security``: ``port-security LIST ...`` (learn modes, address limits, sticky MACs), also inside
  ``interface X``.
- ``shutdown``: ``interface X`` / ``disable``; ``description``: its ``name "..."``.
- ``management``: the out-of-band management port, listed as ``oobm`` when the config has an ``oobm`` context.
- ``unparsed``: every other line of ``interface X``, every per-port global line that names the port
  (``spanning-tree 1-24 admin-edge-port``, ``loop-protect 5``, ``dhcp-snooping trust 24``, ...), and ``vlan N``
  lines that name it besides ``untagged``/``tagged`` (``forbid``), as ``vlan N: <line>``.
- ``vlans``: every ``vlan N`` plus ``management-vlan``/``primary-vlan``; ``vlan_names``: their names. A VLAN with
  ``ip address`` is a routed VLAN interface, not a port; its address is in ``vlan_addresses`` (the switch's
  management address is one of them). ``vtp_mode``: None (no VTP). ``stp_mode``: ``mstp``
  (the ProCurve default protocol once ``spanning-tree`` is enabled), ``rstp``/``stp`` (``force-version``) or
  ``rapid-pvst`` (``spanning-tree mode rapid-pvst``); None when spanning tree is not enabled.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harmless.switch_drivers.portmodel import PortInfo, SwitchModel

#: one port: stack member / chassis prefixes ``N/`` (``1/A1`` VSF, ``1/7`` 2920 stack, ``1/1/1`` ArubaOS names), an
#: optional module letter, the number and an optional lower-case suffix (``C1i``, a 5400R module's interconnect port);
#: or a trunk ``TrkN``
_PORT = re.compile(r"^((?:\d+/)*)([A-Za-z]?)(\d+)([a-z]*)$")
_TRK = re.compile(r"^trk(\d+)$", re.I)
#: lines that open a context closed by ``exit``
_OPENER = re.compile(r"^(vlan \d+|interface \S+|oobm|router \S+|class \S+.*|policy \S+.*|vrf \S+|"
                     r"ip(v6)? access-list \S+.*|stacking|vsf|tunneled-node-server|aruba-central)$", re.I)
#: global per-port commands: command words → the port list is the next word (after an optional ``no``)
_PER_PORT = ("spanning-tree", "loop-protect", "broadcast-limit", "power-over-ethernet", "rate-limit",
             "mirror-port", "lacp", "dhcp-snooping trust", "arp-protect trust", "dhcpv6-snooping trust",
             "lldp admin-status", "lldp enable-notification", "igmp", "qos", "fault-finder", "flow-control",
             "speed-duplex", "gvrp", "unknown-vlans", "ip source-lockdown", "bandwidth-min", "monitor")


def port_key(port: str) -> tuple:
    """Sort key and validation of one ProCurve port name: ``(is trunk, stack members, module, number, suffix)``.

    Raises:
        ValueError: not a ProCurve port name (e.g. ``Fa0/7``).
    """
    if m := _TRK.match(port):
        return 1, (), "", int(m.group(1)), ""
    m = _PORT.match(port)
    if not m:
        raise ValueError(f"bad ProCurve port {port!r} (e.g. 7, A1, 1/A1, 1/7, C1i or Trk1)")
    members = tuple(int(x) for x in m.group(1).split("/") if x)
    return 0, members, m.group(2).upper(), int(m.group(3)), m.group(4)


def _name(key: tuple) -> str:
    """The canonical name of a :func:`port_key`."""
    trk, members, module, num, suffix = key
    if trk:
        return f"Trk{num}"
    return "".join(f"{x}/" for x in members) + f"{module}{num}{suffix}"


def canonical(port: str) -> str:
    """``trk1`` → ``Trk1``, ``a1`` → ``A1`` (the spelling ProCurve prints).

    Raises:
        ValueError: as :func:`port_key`.
    """
    return _name(port_key(port))


def _item_ports(item: str) -> list[str]:
    """One list item (``A1``, ``A1-A4``, ``1/A1-1/A3``) → its ports. Raises ValueError naming the item."""
    lo, sep, hi = item.partition("-")
    klo, khi = port_key(lo), port_key(hi if sep else lo)
    family = lambda k: k[:3] + k[4:]       # noqa: E731 - everything but the number
    if family(klo) != family(khi) or klo[3] > khi[3]:
        raise ValueError(f"bad ProCurve port range {item!r}")
    return [_name(klo[:3] + (n,) + klo[4:]) for n in range(klo[3], khi[3] + 1)]


def read_port_list(text: str) -> tuple[tuple[str, ...], list[str]]:
    """``"1-3,7,A1-A2,C1i,Trk1"`` → ``(the ports, [why each unreadable item could not be read])`` (tolerant: the
    readable items are read, sorted by :func:`port_key`, distinct, canonical spelling)."""
    out: set[str] = set()
    bad: list[str] = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        try:
            out.update(_item_ports(item))
        except ValueError as e:
            bad.append(str(e))
    return tuple(sorted(out, key=port_key)), bad


def parse_port_list(text: str) -> tuple[str, ...]:
    """``"1-3,7,A1-A2,1/A1-1/A3,Trk1"`` → the ports (sorted by :func:`port_key`, distinct, canonical spelling).

    Raises:
        ValueError: a malformed item, or a range across stack members/modules/types or reversed.
    """
    ports, bad = read_port_list(text)
    if bad:
        raise ValueError(bad[0])
    return ports


def format_port_list(ports) -> str:
    """Ports in ProCurve list syntax, runs of two or more as ``a-b`` (``["1","2","7","Trk1"]`` → ``"1-2,7,Trk1"``).

    Raises:
        ValueError: a bad port name.
    """
    keyed = sorted({port_key(p) for p in ports})
    runs: list[list[tuple]] = []
    for k in keyed:
        last = runs[-1][-1] if runs else None
        if last is not None and last[:3] + last[4:] == k[:3] + k[4:] and last[3] + 1 == k[3]:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ",".join(_name(r[0]) + (f"-{_name(r[-1])}" if len(r) > 1 else "") for r in runs)


def _is_port_list(word: str) -> bool:
    try:
        return bool(parse_port_list(word))
    except ValueError:
        return False


@dataclass
class Block:
    """One context of the config: its opening line (``""`` for a top-level line), its lines and line numbers."""

    head: str
    lines: list[str] = field(default_factory=list)
    line_no: int = 0


def parse_blocks(text: str) -> list[Block]:
    """ProCurve config text → top-level lines (``Block("", [line])``) and contexts (``Block("vlan 10", [...])``).

    Comments (``;`` lines), the ``Running configuration:`` banner and blank lines are skipped; each line is
    whitespace-normalised. A context ends at ``exit``, at the next context opener, or (when the text is indented)
    at the next unindented line.
    """
    raw = text.splitlines()
    indented = any(ln[:1] in (" ", "\t") and ln.strip() for ln in raw)
    blocks: list[Block] = []
    cur: Block | None = None
    for n, ln in enumerate(raw, 1):
        s = " ".join(ln.split())
        if not s or s.startswith(";") or s.startswith("Running configuration") or s == "end":
            continue
        if s == "exit":
            cur = None
            continue
        if cur is not None and indented and ln[:1] not in (" ", "\t"):
            cur = None
        if _OPENER.match(s):
            cur = Block(s, [], n)
            blocks.append(cur)
            continue
        if cur is not None:
            cur.lines.append(s)
        else:
            blocks.append(Block("", [s], n))
    return blocks


@dataclass
class _Port:
    untagged: list[int] = field(default_factory=list)
    tagged: set[int] = field(default_factory=set)
    lag: str | None = None
    dot1x: bool = False
    port_security: bool = False
    shutdown: bool = False
    description: str | None = None
    unparsed: list[str] = field(default_factory=list)


def _unquote(s: str) -> str:
    s = s.strip()
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s


@dataclass
class _Collector:
    """The parse state of one running config; one method per kind of block (``vlan N``, ``interface X``, top-level
    lines: ``trunk``, ``aaa port-access``/``port-security``, spanning tree, per-port commands)."""

    ports: dict[str, _Port] = field(default_factory=dict)
    vlan_names: dict[int, str] = field(default_factory=dict)
    vids: set[int] = field(default_factory=set)
    voice_vids: set[int] = field(default_factory=set)
    stp_enabled: bool = False
    stp_mode: str = "mstp"
    oobm: bool = False
    problems: list[str] = field(default_factory=list)
    vlan_addresses: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def plist(self, text: str, n: int, line: str, head: str = "") -> tuple[str, ...]:
        """The ports of a port list in ``line`` (config line ``n``, inside context ``head``); items that cannot be
        read are left out and the line goes to the switch's ``unparsed`` with the reason (no single line stops the
        reader)."""
        ports, bad = read_port_list(text)
        if bad:
            self.problems.append(f"line {n}: {head + ': ' if head else ''}{line} ({'; '.join(bad)})")
        return ports

    def port(self, name: str) -> _Port:
        """The collected port ``name`` (created on first mention)."""
        return self.ports.setdefault(name, _Port())

    def block(self, b: Block) -> None:
        """One block of :func:`parse_blocks`."""
        if m := re.fullmatch(r"vlan (\d+)", b.head):
            self.vlan(int(m.group(1)), b)
        elif m := re.fullmatch(r"interface (\S+)", b.head):
            for p in self.plist(m.group(1), b.line_no, b.head):
                self.interface(self.port(p), b.lines)
        elif b.head == "oobm":
            self.oobm = True
        elif not b.head:
            self.top_line(b.lines[0], b.line_no)

    def vlan(self, vid: int, b: Block) -> None:
        """``vlan N``: name, ``voice``, ``[no] untagged|tagged LIST``, ``forbid LIST`` (kept in ``unparsed``)."""
        self.vids.add(vid)
        for ln in b.lines:
            if nm := re.fullmatch(r"name (.+)", ln):
                self.vlan_names[vid] = _unquote(nm.group(1))
            elif ln == "voice":
                self.voice_vids.add(vid)
            elif (um := re.fullmatch(r"(no )?(untagged|tagged) (\S+)", ln)):
                for p in self.plist(um.group(3), b.line_no, ln, b.head):
                    if um.group(1):
                        if um.group(2) == "untagged":
                            self.port(p)                # listed, removed from this VLAN (e.g. DEFAULT_VLAN)
                        continue
                    if um.group(2) == "untagged":
                        self.port(p).untagged.append(vid)
                    else:
                        self.port(p).tagged.add(vid)
            elif (fm := re.fullmatch(r"(no )?forbid (\S+)", ln)) and _is_port_list(fm.group(2)):
                for p in self.plist(fm.group(2), b.line_no, ln, b.head):
                    self.port(p).unparsed.append(f"vlan {vid}: {ln}")
            elif re.match(r"(no )?(untagged|tagged)\b", ln):       # ``tagged A1, A2``: never silently dropped
                self.problems.append(f"line {b.line_no}: {b.head}: {ln} (not one port list: the device takes no "
                                     "space inside it)")
            elif am := re.fullmatch(r"ip address (\d+\.\d+\.\d+\.\d+)(?:/\d+| \d+\.\d+\.\d+\.\d+)", ln):
                self.vlan_addresses[vid] = self.vlan_addresses.get(vid, ()) + (am.group(1),)

    def interface(self, pt: _Port, lines: list[str]) -> None:
        """The lines of ``interface X`` applied to one port of ``X``."""
        for ln in lines:
            if nm := re.fullmatch(r"name (.+)", ln):
                pt.description = _unquote(nm.group(1))
            elif ln == "disable":
                pt.shutdown = True
            elif ln == "enable":
                pt.shutdown = False
            elif vm := re.fullmatch(r"(untagged|tagged) vlan (\S+)", ln):
                for v in _vid_list(vm.group(2)):
                    self.vids.add(v)
                    if vm.group(1) == "untagged":
                        pt.untagged.append(v)
                    else:
                        pt.tagged.add(v)
            elif re.match(r"aaa port-access (authenticator|mac-based|web-based)\b", ln):
                pt.dot1x = True
            elif ln.startswith("port-security"):
                pt.port_security = True
            else:
                pt.unparsed.append(ln)

    def top_line(self, ln: str, n: int) -> None:
        """One top-level line: LAG membership, port access/security lists, VLAN ids, spanning tree, per-port."""
        w = ln.split()
        if w[0] == "trunk" and len(w) >= 3 and _TRK.match(w[2]):
            trk = canonical(w[2])
            self.port(trk)
            for p in self.plist(w[1], n, ln):
                self.port(p).lag = trk
                if len(w) > 3 and w[3] not in ("trunk", "lacp", "dt-lacp", "dt-trunk", "fec"):
                    self.port(p).unparsed.append(ln)
        elif ln.startswith("hostname "):
            pass
        elif (am := re.fullmatch(r"aaa port-access (authenticator|mac-based|web-based) (\S+)( .*)?", ln)) \
                and _is_port_list(am.group(2)):
            for p in self.plist(am.group(2), n, ln):
                self.port(p).dot1x = True
        elif w[0] == "port-security" and len(w) >= 2 and _is_port_list(w[1]):
            for p in self.plist(w[1], n, ln):
                self.port(p).port_security = True
        elif w[0] in ("management-vlan", "primary-vlan") and len(w) == 2 and w[1].isdigit():
            self.vids.add(int(w[1]))
        elif not self.spanning_tree(ln, w):
            self.per_port(ln, w, n)

    def spanning_tree(self, ln: str, w: list[str]) -> bool:
        """``spanning-tree``, ``spanning-tree mode rapid-pvst``, ``spanning-tree force-version ...``; True if it
        was one of them."""
        if ln == "spanning-tree":
            self.stp_enabled = True
        elif ln == "spanning-tree mode rapid-pvst":
            self.stp_enabled, self.stp_mode = True, "rapid-pvst"
        elif ln.startswith("spanning-tree force-version "):
            self.stp_mode = {"rstp-operation": "rstp", "stp-compatible": "stp"}.get(w[2], self.stp_mode)
        else:
            return False
        return True

    def per_port(self, ln: str, w: list[str], n: int) -> None:
        """A global per-port command (:data:`_PER_PORT`, optionally ``no``): kept in ``unparsed`` of each port."""
        rest = w[1:] if w[0] != "no" else w[2:]
        cmd = w[0] if w[0] != "no" else (w[1] if len(w) > 1 else "")
        for c in _PER_PORT:
            cw = c.split()
            if [cmd, *rest[:len(cw) - 1]] == cw and len(rest) >= len(cw) and _is_port_list(rest[len(cw) - 1]):
                for p in self.plist(rest[len(cw) - 1], n, ln):
                    self.port(p).unparsed.append(ln)
                break


def parse_model(config_text: str, show: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of a ProCurve running config (see the module doc for every field).

    Args:
        config_text: ``show running-config`` output (indented or not).
        show: not used (the running config holds everything the model needs).

    Returns:
        The model; ports sorted (stack member, module, number; trunks last), then ``oobm``.

    Raises:
        ValueError: text that is not a ProCurve config. A port list the reader cannot read (an item like ``B1-16``)
            is not an error: its readable items are read and the line is in the model's ``unparsed`` with the
            reason.
    """
    del show
    blocks = parse_blocks(config_text)
    if not any(b.head.startswith("vlan ") for b in blocks) and \
            not any(b.lines and re.match(r"(hostname|trunk) ", b.lines[0]) for b in blocks if not b.head):
        raise ValueError("no 'vlan N' contexts and no 'hostname'/'trunk' lines: not a ProCurve configuration")
    c = _Collector()
    for b in blocks:
        c.block(b)
    if c.problems and not c.ports:
        raise ValueError(f"no port could be read ({c.problems[0]}): not a ProCurve configuration")
    infos = [_info(name, c.ports[name], c.voice_vids) for name in sorted(c.ports, key=port_key)]
    if c.oobm:
        infos.append(PortInfo(interface="oobm", mode="routed", management=True))
    used = {v for p in infos for v in (p.access_vid, p.native_vid, p.voice_vid) if v is not None}
    used |= {v for p in infos if isinstance(p.allowed_vids, tuple) for v in p.allowed_vids}
    return SwitchModel(vtp_mode=None, vlans=tuple(sorted(c.vids | used)), ports=tuple(infos),
                       stp_mode=c.stp_mode if c.stp_enabled else None, stp_instance_limit=None,
                       vlan_names=c.vlan_names, unparsed=tuple(c.problems), vlan_addresses=c.vlan_addresses)


def _vid_list(text: str) -> list[int]:
    out: list[int] = []
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out += list(range(int(lo), int(hi or lo) + 1))
    return out


def _info(name: str, p: _Port, voice_vids: set[int]) -> PortInfo:
    access = native = voice = None
    allowed: tuple[int, ...] | None = None
    untagged = p.untagged[-1] if p.untagged else None
    unparsed = list(p.unparsed)
    if len(set(p.untagged)) > 1:                      # impossible on the device: say so rather than pick one
        unparsed.append("untagged in VLANs " + ",".join(str(v) for v in sorted(set(p.untagged))))
    voice_tagged = sorted(p.tagged & voice_vids)
    if p.tagged - voice_vids or (p.tagged and untagged is None):
        mode, native, allowed = "trunk", untagged, tuple(sorted(p.tagged))
    elif untagged is not None:
        mode, access = "access", untagged
    else:
        mode = "unknown"
    if voice_tagged:
        voice = voice_tagged[0]
    return PortInfo(interface=name, mode=mode, access_vid=access, native_vid=native, allowed_vids=allowed,
                    lag=p.lag, is_lag=bool(_TRK.match(name)), voice_vid=voice, dot1x=p.dot1x,
                    port_security=p.port_security, shutdown=p.shutdown, description=p.description,
                    unparsed=tuple(dict.fromkeys(unparsed)))


__all__ = ["Block", "canonical", "format_port_list", "parse_blocks", "parse_model", "parse_port_list", "port_key",
           "read_port_list"]
