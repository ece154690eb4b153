"""The per-port model (:class:`~harmless.switch_drivers.portmodel.SwitchModel`) of a Junos configuration (pure).

Input: the configuration as curly text (``show configuration``, what NAPALM ``get_config`` returns) or as ``set``
commands (``show configuration | display set``), parsed into set paths by :mod:`.conf` (which also keeps the
``inactive:`` / ``deactivate`` statements apart). Both VLAN syntaxes are read: ELS (``vlans X { vlan-id N; }``,
``interface-mode access|trunk``, ``native-vlan-id`` on the interface) and the original non-ELS one (``port-mode``,
``native-vlan-id`` under the family, ``vlans X interface IF.0`` memberships, ``ethernet-switching-options``).

How each field is filled (Junos semantics; sources: Juniper's EX/QFX "Configuring VLANs" and "interface-range"
documentation):

- ``interfaces``: every interface under ``interfaces`` (``interface-range`` members expanded: ``member
  ge-0/0/[1-4]``, ``member-range ge-0/0/10 to ge-0/0/15``; the range's statements apply to each member), plus
  ports only named in a non-ELS ``vlans X interface IF.0``. Not ports: ``lo0``, ``irb``, ``vlan`` (routed VLAN
  interfaces, listed as VLANs) and the ``interface-range``/``interface-set``/``traceoptions`` containers.
- ``mode``: a unit with ``family ethernet-switching`` (or MX ``family bridge``) or a VLAN-side membership → a
  layer-2 port: ``interface-mode``/``port-mode`` ``access`` (the default) or ``trunk`` (any other value, e.g.
  ``tagged-access``, is ``unknown`` with the line in ``unparsed``); else a unit with ``family inet``/``inet6``/
  ``iso``/``mpls`` → ``routed``; else ``unknown`` (e.g. an ``ae`` member, whose VLANs are on the ``ae``).
- ``access_vid``: the lowest VID of the ``vlan members`` (names resolved to IDs, also ``vlan-id-list`` VLANs),
  VID 1 (the ``default`` VLAN) without members; ``native_vid``: ``native-vlan-id`` (ELS on the interface,
  non-ELS under the family, a VID or a name), None when unset (Junos then drops untagged frames on a trunk);
  ``allowed_vids``: the trunk's members, ``"all"`` for ``members all``.
- ``lag``: ``ether-options``/``gigether-options 802.3ad aeN`` (or ``redundant-parent rethN`` on SRX clusters);
  ``is_lag``: ``aeN``/``rethN``. ``mlag_peer_link``: the MC-LAG inter-chassis link named by ``multi-chassis
  multi-chassis-protection ADDR interface aeN`` and its members.
- ``voice_vid``: ``switch-options voip interface X vlan V`` (ELS) / ``ethernet-switching-options voip ...``
  (non-ELS); ``interface access-ports`` means every access port.
- ``dot1x``: ``protocols dot1x authenticator interface X`` (also MAC RADIUS / captive portal under it; ``interface
  all`` means every access port: Junos authenticates on access ports only).
- ``port_security``: a MAC limit or sticky MACs: ``switch-options interface X interface-mac-limit`` /
  ``persistent-learning`` (ELS, also under ``vlans V switch-options``), ``ethernet-switching-options
  secure-access-port interface X mac-limit``/``allowed-mac``/``persistent-learning`` (non-ELS, ``interface all``
  means every access port).
- ``shutdown``: ``disable`` on the interface; ``management``: ``fxp0``/``em0``/``em1``/``me0``/``vme``.
- ``unparsed``: every statement on the port the model does not interpret, as a ``set`` line (``storm-control``,
  ``mtu``, LACP options, ``protocols rstp interface X edge``, ``poe interface X``, ...: any statement elsewhere that
  names the port or its range), and every ``inactive:`` statement on it as ``inactive: set ...`` (Junos ignores
  them, but a later ``set`` under a deactivated interface stays inactive). Non-ELS ``storm-control interface all``
  is listed on every layer-2 port.
- ``vlans``: every VID of ``vlans``/``bridge-domains`` (``vlan-id``, ``vlan-id-list``, non-ELS ``vlan-range``) and
  every VID a port uses; ``vlan_names``: VID → VLAN name. ``vtp_mode``: None (Junos has no VTP);
  ``stp_mode``: ``rstp``/``mstp``/``vstp``/``stp`` from ``protocols``; ``stp_instance_limit``: None (not known).

Configuration groups are applied first (:func:`inherit_groups`: ``apply-groups``, ``<ge-*>`` wildcards), like
``show configuration | display inheritance``. Not modelled (left in ``unparsed``): Q-in-Q units, ``family bridge``
options beyond ``interface-mode``/``vlan-id``/``vlan-id-list``.
"""
from __future__ import annotations

import fnmatch
import itertools
import re
from dataclasses import replace

from harmless.switch_drivers.junos.conf import SINGLE_VALUED, Path, display_set, read_config
from harmless.switch_drivers.l2pt import PROTOCOLS
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel

#: interfaces that are not switch ports (loopback, routed VLAN interfaces, tunnels) and containers under ``interfaces``
NOT_PORTS = re.compile(r"^(lo\d+|irb|vlan|st\d+|dsc|(gr|ip|lt|vt)-\S+|interface-range|interface-set|traceoptions|"
                       r"apply-groups(-except)?)$")
#: management interfaces (SRX/MX ``fxp0``, QFX/EX ELS ``em0``/``em1``, EX ``me0``, virtual chassis ``vme``)
MANAGEMENT = re.compile(r"^(fxp\d+|em\d+|me\d+|vme)$")
LAG_NAME = re.compile(r"^(ae|reth)\d+$")
_L3_FAMILIES = {"inet", "inet6", "iso", "mpls"}
_L2_FAMILIES = {"ethernet-switching", "bridge"}
_STP = ("mstp", "vstp", "rstp", "stp")
#: statements whose value the configuration's own statement replaces rather than adds to (group inheritance)
_VALUED = SINGLE_VALUED | {"members", "vlan-id-list"}


def _expand_wildcard(name: str) -> list[str]:
    """``ge-0/0/[1-4]`` → ``[ge-0/0/1, ..., ge-0/0/4]`` (each ``[a-b,c]`` group expanded; no group: ``[name]``)."""
    parts = re.split(r"(\[[^\]]*\])", name)
    choices = []
    for part in parts:
        if part.startswith("[") and part.endswith("]"):
            vals: list[str] = []
            for item in part[1:-1].split(","):
                lo, _, hi = item.strip().partition("-")
                if not lo.isdigit() or (hi and not hi.isdigit()):
                    raise ValueError(f"interface-range member {name!r}: cannot expand {part!r}")
                vals += [str(n) for n in range(int(lo), int(hi or lo) + 1)]
            choices.append(vals)
        else:
            choices.append([part])
    return ["".join(c) for c in itertools.product(*choices)]


def _expand_member_range(lo: str, hi: str) -> list[str]:
    """``member-range ge-0/0/10 to ge-0/0/15`` → the six names (same type, FPC and PIC; else just the ends)."""
    a, b = re.fullmatch(r"(.*\D)(\d+)", lo), re.fullmatch(r"(.*\D)(\d+)", hi)
    if not a or not b or a.group(1) != b.group(1) or int(a.group(2)) > int(b.group(2)):
        return [lo, hi]
    return [f"{a.group(1)}{n}" for n in range(int(a.group(2)), int(b.group(2)) + 1)]


def inherit_groups(ordered: list[tuple[Path, bool]]) -> list[tuple[Path, bool]]:
    """Configuration groups applied, as ``show configuration | display inheritance`` shows them.

    ``apply-groups G`` at the top applies every statement of ``groups G``; an interface's own ``apply-groups G``
    applies ``G``'s ``interfaces`` statements to it. Interface names in a group may be wildcards (``<ge-*>``,
    ``<*>``, shell-style like Junos) and match only interfaces the configuration names itself. Inherited
    statements come before the configuration's own ones; a statement with a value the configuration sets itself
    (``description``, ``interface-mode``, ``vlan members``, ...) is not inherited.
    ``apply-groups-except`` on an interface is honoured; groups named by a variable (``"${node}"``, SRX
    clusters) and wildcards outside ``interfaces`` are not applied.

    Returns:
        The paths without ``groups`` / ``apply-groups`` statements, inherited ones (active) first.
    """
    active = [p for p, off in ordered if not off]
    groups: dict[str, list[Path]] = {}
    for p in active:
        if p[0] == "groups" and len(p) >= 3:
            groups.setdefault(p[1], []).append(p[2:])
    rest = [(p, off) for p, off in ordered if p[0] not in ("groups", "apply-groups")
            and not (p[0] == "interfaces" and len(p) >= 3 and p[2] in ("apply-groups", "apply-groups-except"))]
    if not groups:
        return rest
    top = [p[1] for p in active if len(p) == 2 and p[0] == "apply-groups"]
    own: dict[str, list[str]] = {}
    except_: dict[str, set[str]] = {}
    for p in active:
        if p[0] == "interfaces" and len(p) == 4 and p[2] == "apply-groups":
            own.setdefault(p[1], []).append(p[3])
        elif p[0] == "interfaces" and len(p) == 4 and p[2] == "apply-groups-except":
            except_.setdefault(p[1], set()).add(p[3])
    names = list(dict.fromkeys(p[1] for p in active if p[0] == "interfaces" and len(p) >= 2
                               and not NOT_PORTS.match(p[1])))

    def matches(name: str, pattern: str) -> bool:
        if pattern.startswith("<") and pattern.endswith(">"):
            return fnmatch.fnmatchcase(name, pattern[1:-1])
        return name == pattern

    inherited: list[Path] = []
    for g in top:
        for q in groups.get(g, []):
            if q[0] == "interfaces" and len(q) >= 2:
                inherited += [("interfaces", n) + q[2:] for n in names
                              if matches(n, q[1]) and g not in except_.get(n, set())]
            elif not any(w.startswith("<") for w in q):
                inherited.append(q)
    for n, gs in own.items():
        for g in gs:
            inherited += [("interfaces", n) + q[2:] for q in groups.get(g, [])
                          if q[0] == "interfaces" and len(q) >= 2 and matches(n, q[1])]
    existing = {p for p, _off in rest}
    # a value the configuration sets itself is not inherited (``description``, ``interface-mode``, ``members``)
    valued = {p[:-1] for p in existing if len(p) >= 2 and p[-2] in _VALUED}
    return [(p, False) for p in dict.fromkeys(inherited)
            if p not in existing and not (len(p) >= 2 and p[-2] in _VALUED and p[:-1] in valued)] + rest


def _vid_words(value: str) -> set[int]:
    """``"100"`` / ``"100-110"`` → VIDs (empty set for anything else)."""
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", value)
    if not m:
        return set()
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    return {v for v in range(lo, hi + 1) if 1 <= v <= 4094}


class _Port:
    """What the parser collects for one interface before it becomes a :class:`PortInfo`."""

    def __init__(self, name: str):
        self.name = name
        self.l2 = False
        self.l3 = False
        self.mode_word: str | None = None
        self.members: list[str] = []
        self.native: str | None = None
        self.bridge_vids: list[str] = []
        self.lag: str | None = None
        self.mlag = False
        self.voice: str | None = None
        self.dot1x = False
        self.port_security = False
        self.shutdown = False
        self.description: str | None = None
        self.routed_only: list[Path] = []   # understood only if the port is routed (vlan-tagging, unit vlan-id)
        self.unparsed: list[str] = []
        self.l2pt: set[str] = set()         # protocols layer2-control mac-rewrite interface X protocol P


#: ``layer2-control mac-rewrite`` protocol keywords that are HARMLESS protocols (the Junos keyword is the same name)
JUNOS_L2PT = ("lldp", "stp", "cdp", "vtp", "lacp", "udld")


def _line(p: Path) -> str:
    return display_set([p]).strip()


def parse_model(config_text: str, show: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of a Junos configuration (see the module doc for every field).

    Args:
        config_text: ``show configuration`` text or ``| display set`` commands.
        show: not used (the configuration holds everything the model needs on Junos).

    Returns:
        The model; ports in configuration order.

    Raises:
        ValueError: the text is not a Junos configuration (no statement can be read, or none of the top-level
            statements a switch has); the message names the line. Statements that cannot be read in a text that
            is otherwise a configuration are not an error: they are in the model's ``unparsed`` with the line and
            the reason (:func:`.conf.read_config`).
    """
    del show
    ordered, problems = read_config(config_text)
    if not ordered:
        raise ValueError("no Junos configuration statements found" + (f" ({problems[0]})" if problems else ""))
    if not any(p[0] in ("interfaces", "vlans", "system", "version", "protocols") for p, _off in ordered):
        raise ValueError("no 'interfaces', 'vlans', 'system' or 'protocols' statements: not a Junos configuration")
    model = model_from_paths(ordered)
    return replace(model, unparsed=tuple(problems)) if problems else model


def _vlan_table(active: list[Path]) -> tuple[dict[str, set[int]], dict[int, str]]:
    """``vlans``/``bridge-domains`` → (VLAN name → VIDs, VID → first VLAN name)."""
    vlan_vids: dict[str, set[int]] = {}
    vlan_names: dict[int, str] = {}
    for p in active:
        if p[0] in ("vlans", "bridge-domains") and len(p) >= 4 and p[2] in ("vlan-id", "vlan-id-list", "vlan-range"):
            vids = _vid_words(p[3])
            vlan_vids.setdefault(p[1], set()).update(vids)
            for v in sorted(vids):
                vlan_names.setdefault(v, p[1])
        elif p[0] in ("vlans", "bridge-domains") and len(p) >= 2:
            vlan_vids.setdefault(p[1], set())
    return vlan_vids, vlan_names


def _range_members(active: list[Path], problems: list[str]) -> dict[str, list[str]]:
    """``interfaces interface-range NAME member/member-range ...`` → range name → member interfaces (in order); a
    member wildcard that cannot be expanded is left out and described in ``problems``."""
    ranges: dict[str, list[str]] = {}
    for p in active:
        if p[:2] == ("interfaces", "interface-range") and len(p) >= 5:
            members = ranges.setdefault(p[2], [])
            if p[3] == "member":
                try:
                    members += [m for m in _expand_wildcard(p[4]) if m not in members]
                except ValueError as e:
                    problems.append(f"{_line(p)} ({e})")
            elif p[3] == "member-range" and len(p) == 7 and p[5] == "to":
                members += [m for m in _expand_member_range(p[4], p[6]) if m not in members]
    return ranges


def _security_target(p: Path) -> tuple[str, str] | None:
    """A MAC-limit / sticky-MAC statement → (interface word, option), else None (ELS ``switch-options``, also under
    ``vlans V``, and non-ELS ``secure-access-port``)."""
    if len(p) >= 4 and p[0] == "switch-options" and p[1] == "interface":
        return p[2], p[3]
    if len(p) >= 6 and p[0] == "vlans" and p[2:4] == ("switch-options", "interface"):
        return p[4], p[5]
    if len(p) >= 5 and p[:3] == ("ethernet-switching-options", "secure-access-port", "interface"):
        return p[3], p[4]
    return None


class _Collector:
    """The parse state of one configuration: VLANs, interface ranges and the ports collected so far; one method per
    section of the configuration (``interfaces``, VLAN-side memberships, statements elsewhere naming ports)."""

    def __init__(self, active: list[Path]):
        self.vlan_vids, self.vlan_names = _vlan_table(active)
        self.problems: list[str] = []
        self.ranges = _range_members(active, self.problems)
        self.ports: dict[str, _Port] = {}

    def resolve(self, member: str) -> set[int] | None:
        """A VLAN name or VID (range) → VIDs; None for ``all``; empty set when unknown."""
        if member == "all":
            return None
        if member in self.vlan_vids:
            return set(self.vlan_vids[member])
        return _vid_words(member)

    def port(self, name: str) -> _Port:
        """The collected port ``name`` (created on first mention)."""
        if name not in self.ports:
            self.ports[name] = _Port(name)
        return self.ports[name]

    def targets(self, word: str) -> list[str]:
        """An interface word of a statement (``ge-0/0/1``, ``ge-0/0/1.0``, a range name) → port names."""
        if word in self.ranges:
            return self.ranges[word]
        base = word.split(".")[0]
        return [base] if base in self.ports else []

    def access_ports(self) -> list[_Port]:
        """Layer-2 ports in access mode (what ``interface all`` / ``access-ports`` means)."""
        return [q for q in self.ports.values() if q.l2 and (q.mode_word or "access") == "access"]

    # ------------------------------------------------------------ statements under interfaces
    def on_interface(self, pt: _Port, rest: Path, p: Path) -> None:
        """One statement ``rest`` under ``interfaces <pt>`` (``p``: the whole path, for ``unparsed``)."""
        if rest == ("disable",):
            pt.shutdown = True
        elif len(rest) == 2 and rest[0] == "description":
            pt.description = rest[1]
        elif len(rest) == 2 and rest[0] == "native-vlan-id":
            pt.native = rest[1]
        elif len(rest) == 3 and rest[0] in ("ether-options", "gigether-options") and rest[1] == "802.3ad" \
                and LAG_NAME.match(rest[2]):
            pt.lag = rest[2]
        elif len(rest) == 3 and rest[:2] == ("gigether-options", "redundant-parent") and LAG_NAME.match(rest[2]):
            pt.lag = rest[2]
        elif rest in (("vlan-tagging",), ("flexible-vlan-tagging",)):
            pt.routed_only.append(p)
        elif len(rest) >= 2 and rest[0] == "unit":
            self.on_unit(pt, rest[2:], p)
        else:
            pt.unparsed.append(_line(p))

    def on_unit(self, pt: _Port, u: Path, p: Path) -> None:
        """One statement ``u`` under ``interfaces <pt> unit N``."""
        if not u:
            return
        if len(u) == 2 and u[0] == "vlan-id":
            pt.routed_only.append(p)
        elif len(u) >= 2 and u[0] == "family" and u[1] in _L2_FAMILIES:
            pt.l2 = True
            self.on_l2(pt, u[2:], p)
        elif len(u) >= 2 and u[0] == "family" and u[1] in _L3_FAMILIES:
            pt.l3 = True
            if not (len(u) == 2 or (len(u) == 4 and u[2] == "address")):
                pt.unparsed.append(_line(p))
        else:
            pt.unparsed.append(_line(p))

    def on_l2(self, pt: _Port, t: Path, p: Path) -> None:
        """One statement ``t`` under ``unit N family ethernet-switching|bridge``."""
        if not t:
            return
        if len(t) == 2 and t[0] in ("interface-mode", "port-mode"):
            pt.mode_word = t[1]
            if t[1] not in ("access", "trunk"):
                pt.unparsed.append(_line(p))
        elif len(t) == 3 and t[:2] == ("vlan", "members"):
            pt.members.append(t[2])
            if not self.resolve(t[2]) and t[2] != "all":
                pt.unparsed.append(_line(p))           # a VLAN name the configuration does not define
        elif len(t) == 2 and t[0] == "native-vlan-id":
            pt.native = t[1]
        elif len(t) == 2 and t[0] in ("vlan-id", "vlan-id-list"):   # MX family bridge
            pt.bridge_vids.append(t[1])
        else:
            pt.unparsed.append(_line(p))

    def interfaces(self, document: list[tuple[Path, bool]], active: list[Path], inactive: list[Path]) -> None:
        """The ``interfaces`` section: ports in document order (inactive ones included), range statements applied
        to each member first, then the interface's own statements (they win); inactive statements shown only."""
        for p, off in document:
            if p[0] == "interfaces" and len(p) >= 2 and not NOT_PORTS.match(p[1]):
                self.port(p[1])
            elif not off and p[:2] == ("interfaces", "interface-range") and len(p) >= 5 \
                    and p[3] in ("member", "member-range"):
                for m in self.ranges.get(p[2], []):
                    self.port(m)
        range_stmts: dict[str, list[Path]] = {}
        explicit: list[tuple[_Port, Path]] = []
        for p in active:
            if p[0] != "interfaces" or len(p) < 2:
                continue
            if p[1] == "interface-range" and len(p) >= 4:
                if p[3] in ("member", "member-range"):
                    for m in self.ranges.get(p[2], []):
                        self.port(m)
                else:
                    range_stmts.setdefault(p[2], []).append(p)
            elif not NOT_PORTS.match(p[1]):
                pt = self.port(p[1])
                if len(p) > 2:
                    explicit.append((pt, p))
        for rname, stmts in range_stmts.items():
            for m in self.ranges.get(rname, []):
                for p in stmts:
                    self.on_interface(self.port(m), p[3:], p)
        for pt, p in explicit:
            self.on_interface(pt, p[2:], p)
        self.inactive(inactive)

    def inactive(self, inactive: list[Path]) -> None:
        """``inactive:`` statements under ``interfaces``: listed in ``unparsed`` of their port(s), never applied."""
        for p in inactive:
            if p[0] == "interfaces" and len(p) >= 2:
                names = self.ranges.get(p[2], []) if p[1] == "interface-range" and len(p) >= 3 else \
                    [] if NOT_PORTS.match(p[1]) else [p[1]]
                for name in names:
                    self.port(name).unparsed.append("inactive: " + _line(p))

    def vlan_memberships(self, active: list[Path]) -> None:
        """VLAN-side memberships ``vlans X interface IF.0`` (non-ELS, also ELS): the port is layer 2, a member."""
        for p in active:
            if p[0] == "vlans" and len(p) >= 4 and p[2] == "interface":
                name = p[3].split(".")[0]
                if NOT_PORTS.match(name):
                    continue
                pt = self.port(name)
                pt.l2 = True
                pt.members.append(p[1])
                if len(p) > 4:
                    pt.unparsed.append(_line(p))

    # ------------------------------------------------------------ statements elsewhere that name ports
    def elsewhere(self, active: list[Path]) -> None:
        """Statements outside ``interfaces``/``vlans`` that name ports: 802.1X, voice VLAN, MAC limits, MC-LAG,
        storm control; any other statement naming a port goes to its ``unparsed``. LAG members then inherit the
        MC-LAG peer-link mark of their ``ae``."""
        for p in active:
            if p[0] in ("interfaces", "vlans", "bridge-domains") and not (p[0] == "vlans" and "switch-options" in p):
                continue
            if not (self.dot1x(p) or self.voice(p) or self.security(p) or self.mclag(p) or self.storm_all(p)
                    or self.mac_rewrite(p)):
                named = {n for w in p[1:] for n in self.targets(w)}
                for n in sorted(named, key=list(self.ports).index):
                    self.ports[n].unparsed.append(_line(p))
        for q in self.ports.values():
            if q.lag and q.lag in self.ports and self.ports[q.lag].mlag:
                q.mlag = True

    def _hit(self, word: str, every: tuple[str, ...]) -> list[_Port]:
        return self.access_ports() if word in every else [self.ports[n] for n in self.targets(word)]

    def dot1x(self, p: Path) -> bool:
        """``protocols dot1x authenticator interface X|all``."""
        if p[:4] == ("protocols", "dot1x", "authenticator", "interface") and len(p) >= 5:
            for q in self._hit(p[4], ("all",)):
                q.dot1x = True
            return True
        return False

    def voice(self, p: Path) -> bool:
        """``switch-options|ethernet-switching-options voip interface X|access-ports|all vlan V``."""
        if len(p) >= 5 and p[0] in ("switch-options", "ethernet-switching-options") and p[1:3] == ("voip", "interface"):
            for q in self._hit(p[3], ("access-ports", "all")):
                if len(p) == 6 and p[4] == "vlan":
                    q.voice = p[5]
            return True
        return False

    def security(self, p: Path) -> bool:
        """MAC limits / sticky MACs (:func:`_security_target`); other options there go to ``unparsed``."""
        sec = _security_target(p)
        if not sec:
            return False
        for q in self._hit(sec[0], ("all",)):
            if sec[1] in ("interface-mac-limit", "mac-limit", "allowed-mac", "persistent-learning"):
                q.port_security = True
            else:
                q.unparsed.append(_line(p))
        return True

    def mac_rewrite(self, p: Path) -> bool:
        """``protocols layer2-control mac-rewrite interface X protocol P`` (Junos CLI Reference, ``protocol (Layer 2
        Protocol Tunneling)``) for the protocols HARMLESS knows; others (``elmi``, ``gvrp``, ...) stay ``unparsed``."""
        if p[:4] == ("protocols", "layer2-control", "mac-rewrite", "interface") and len(p) == 7 \
                and p[5] == "protocol" and p[6] in JUNOS_L2PT:
            for n in self.targets(p[4]):
                self.ports[n].l2pt.add(p[6])
            return True
        return False

    def mclag(self, p: Path) -> bool:
        """``multi-chassis multi-chassis-protection ADDR interface aeN``: the MC-LAG inter-chassis link."""
        if p[:2] == ("multi-chassis", "multi-chassis-protection") and len(p) >= 5 and p[3] == "interface":
            for n in self.targets(p[4]):
                self.ports[n].mlag = True
            return True
        return False

    def storm_all(self, p: Path) -> bool:
        """Non-ELS ``storm-control interface all``: listed on every layer-2 port."""
        if p[:4] == ("ethernet-switching-options", "storm-control", "interface", "all"):
            for q in self.ports.values():
                if q.l2:
                    q.unparsed.append(_line(p))
            return True
        return False


def model_from_paths(ordered: list[tuple[Path, bool]]) -> SwitchModel:
    """The model of parsed set paths in document order, ``[(path, inactive), ...]``
    (:func:`conf.parse_config_ordered`); any paths, even none (an empty model).

    An ``interface-range`` member wildcard that cannot be expanded is left out and listed in the model's
    ``unparsed`` with the reason.
    """
    document = ordered
    ordered = inherit_groups(ordered)
    active = [p for p, off in ordered if not off]
    inactive = [p for p, off in ordered if off]
    c = _Collector(active)
    c.interfaces(document, active, inactive)
    c.vlan_memberships(active)
    c.elsewhere(active)
    stp = next((w for w in _STP if any(p[:2] == ("protocols", w) and p[2:] != ("disable",) for p in active)), None)
    used: set[int] = set()
    infos = [_info(q, c.resolve, used) for q in c.ports.values()]
    vids = {v for s in c.vlan_vids.values() for v in s} | used
    return SwitchModel(vtp_mode=None, vlans=tuple(sorted(vids)), ports=tuple(infos), stp_mode=stp,
                       stp_instance_limit=None, vlan_names=c.vlan_names, unparsed=tuple(c.problems),
                       vlan_addresses=_l3_addresses(active, c.vlan_vids))


def _l3_addresses(active: list[Path], vlan_vids: dict[str, set[int]]) -> dict[int, tuple[str, ...]]:
    """VID -> the addresses of the VLAN's layer-3 interface: ``vlans V l3-interface irb.N`` (ELS; non-ELS
    ``vlan.N``; MX ``bridge-domains V routing-interface irb.N``) and that unit's ``family inet|inet6 address A/L``."""
    units: dict[tuple[str, str], set[int]] = {}
    for p in active:
        if p[0] in ("vlans", "bridge-domains") and len(p) == 4 and p[2] in ("l3-interface", "routing-interface") \
                and "." in p[3]:
            ifname, unit = p[3].split(".", 1)
            units.setdefault((ifname, unit), set()).update(vlan_vids.get(p[1], set()))
    out: dict[int, list[str]] = {}
    for p in active:
        if p[0] == "interfaces" and len(p) >= 8 and p[2] == "unit" and (p[1], p[3]) in units \
                and p[4:6] in (("family", "inet"), ("family", "inet6")) and p[6] == "address":
            for vid in units[(p[1], p[3])]:
                out.setdefault(vid, []).append(p[7].split("/")[0])
    return {vid: tuple(dict.fromkeys(a)) for vid, a in sorted(out.items())}


def _info(q: _Port, resolve, used: set[int]) -> PortInfo:
    """One collected interface → :class:`PortInfo`; adds the VIDs it uses to ``used``."""
    access = native = voice = None
    allowed: tuple[int, ...] | str | None = None
    unparsed = list(q.unparsed)
    if q.l2:
        mode = q.mode_word or "access"
        mode = mode if mode in ("access", "trunk") else "unknown"
        members: set[int] | None = set()
        for m in q.members + q.bridge_vids:
            v = resolve(m)
            members = None if v is None or members is None else members | v
        if mode == "access":
            if q.members or q.bridge_vids:
                access = min(members) if members else None
            else:
                access = 1                                # the default VLAN
        elif mode == "trunk":
            allowed = "all" if members is None else tuple(sorted(members))
            if q.native is not None:
                nv = resolve(q.native)
                native = min(nv) if nv else None
        unparsed += [_line(p) for p in q.routed_only]
    elif q.l3:
        mode = "routed"
    else:
        mode = "unknown"
        unparsed += [_line(p) for p in q.routed_only]
    if q.voice is not None:
        vv = resolve(q.voice)
        voice = min(vv) if vv else None
    for v in (access, native, voice):
        if v is not None:
            used.add(v)
    if isinstance(allowed, tuple):
        used.update(allowed)
    return PortInfo(interface=q.name, mode=mode, access_vid=access, native_vid=native, allowed_vids=allowed,
                    lag=q.lag, is_lag=bool(LAG_NAME.match(q.name)), mlag_peer_link=q.mlag, voice_vid=voice,
                    dot1x=q.dot1x, port_security=q.port_security, shutdown=q.shutdown,
                    management=bool(MANAGEMENT.match(q.name)), description=q.description,
                    unparsed=tuple(dict.fromkeys(unparsed)), l2pt=tuple(x for x in PROTOCOLS if x in q.l2pt))


__all__ = ["inherit_groups", "model_from_paths", "parse_model"]
