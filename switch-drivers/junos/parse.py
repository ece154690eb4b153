"""Per-port 802.1Q state and VLANs from a Junos configuration (pure; ELS and non-ELS syntax).

Input is the configuration as curly text (``show configuration``, what NAPALM ``get_config`` returns) or as
``set`` commands (``show configuration | display set``); both become set paths (:mod:`.conf`).

A port is a layer-2 port when it has ``unit 0 family ethernet-switching``. Its mode is ``interface-mode`` (ELS)
or ``port-mode`` (non-ELS), default ``access``. VLAN members may be names, VIDs, ranges (``100-110``) or
``all``; non-ELS configs may also list ports under ``vlans NAME interface IF.0``. An access port without
members is in the default VLAN (VID 1). A trunk's native VLAN is ``native-vlan-id`` (ELS: on the interface;
non-ELS: under the family, a name or VID); without one the trunk has no untagged VLAN (``native_vid`` None).
Not modelled: ``interface-range``, apply-groups, QinQ units.
"""
from __future__ import annotations

import re

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.junos.conf import Path, parse_curly, parse_set

_ESW = ("unit", "0", "family", "ethernet-switching")
#: non-ELS EX platforms (original ethernet-switching syntax, ``port-mode``); others run ELS (``interface-mode``)
LEGACY_MODELS = re.compile(r"^EX(2200|3200|3300|4200|4500|4550|6200|8200)", re.I)


def config_paths(text: str) -> list[Path]:
    """Set paths of a configuration given as curly text or as ``set`` commands (detected)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    if first.startswith("set "):
        return [p for op, p in parse_set(text) if op == "set"]
    return parse_curly(text)


def parse_vlans(text: str) -> dict[int, str]:
    """``{vid: name}`` for every ``vlans NAME vlan-id VID`` (ELS's implicit ``default`` VLAN is VID 1).

    Raises:
        ValueError: the configuration text does not parse.
    """
    out = {}
    for p in config_paths(text):
        if len(p) == 4 and p[0] == "vlans" and p[2] == "vlan-id" and p[3].isdigit():
            out[int(p[3])] = p[1]
    out.setdefault(1, "default")
    return out


def _vids(member: str, by_name: dict[str, int]) -> set[int] | None:
    """One ``members`` value → VIDs (None = all)."""
    if member == "all":
        return None
    if member in by_name:
        return {by_name[member]}
    if m := re.fullmatch(r"(\d+)(?:-(\d+))?", member):
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        return set(range(lo, hi + 1))
    return set()                                     # unknown VLAN name: the device would refuse the commit


def detect_syntax(text: str, model: str = "") -> str:
    """``"els"`` or ``"legacy"``: what the configuration uses, else what the model runs (ELS if unknown).

    Evidence order: an ``interface-mode`` statement → ELS; ``port-mode`` or ``ethernet-switching-options`` →
    legacy; else the model (:data:`LEGACY_MODELS`).
    """
    paths = config_paths(text)
    words = {w for p in paths for w in p}
    if "interface-mode" in words:
        return "els"
    if "port-mode" in words or any(p[0] == "ethernet-switching-options" for p in paths):
        return "legacy"
    return "legacy" if LEGACY_MODELS.match(model or "") else "els"


def parse_port_states(text: str) -> dict[str, PortVlanState]:
    """``{interface: PortVlanState}`` for every layer-2 port of the configuration (see the module doc).

    Raises:
        ValueError: the configuration text does not parse.
    """
    paths = config_paths(text)
    by_name = {v: k for k, v in parse_vlans(text).items()}
    ports: dict[str, dict] = {}
    disabled: set[str] = set()
    native_if: dict[str, str] = {}
    for p in paths:
        if len(p) >= 3 and p[0] == "interfaces":
            name, rest = p[1], p[2:]
            if rest == ("disable",):
                disabled.add(name)
            elif len(rest) == 2 and rest[0] == "native-vlan-id":
                native_if[name] = rest[1]
            elif rest[:4] == _ESW:
                d = ports.setdefault(name, {"mode": "access", "members": [], "native": None})
                tail = rest[4:]
                if len(tail) == 2 and tail[0] in ("interface-mode", "port-mode"):
                    d["mode"] = tail[1]
                elif len(tail) == 3 and tail[:2] == ("vlan", "members"):
                    d["members"].append(tail[2])
                elif len(tail) == 2 and tail[0] == "native-vlan-id":
                    d["native"] = tail[1]
        elif len(p) == 4 and p[0] == "vlans" and p[2] == "interface":   # non-ELS: VLAN-side membership
            ifname = p[3].split(".")[0]
            ports.setdefault(ifname, {"mode": "access", "members": [], "native": None})["members"].append(p[1])
    result = {}
    for name, d in ports.items():
        vids: set[int] | None = set()
        for m in d["members"]:
            v = _vids(m, by_name)
            vids = None if v is None or vids is None else vids | v
        if d["mode"] == "trunk":
            native = d["native"] or native_if.get(name)
            nvid = None if native is None else next(iter(sorted(_vids(native, by_name) or {1})), None)
            result[name] = PortVlanState(name=name, mode="trunk", native_vid=nvid,
                                         allowed_vids=None if vids is None else tuple(sorted(vids)),
                                         shutdown=name in disabled)
        else:
            access = min(vids) if vids else 1
            result[name] = PortVlanState(name=name, mode="access", access_vid=access, shutdown=name in disabled)
    return result


def vlan_side_members(text: str) -> dict[str, list[str]]:
    """Non-ELS VLAN-side memberships: ``{interface: [VLAN names]}`` from ``vlans NAME interface IF.0``.

    Raises:
        ValueError: the configuration text does not parse.
    """
    out: dict[str, list[str]] = {}
    for p in config_paths(text):
        if len(p) == 4 and p[0] == "vlans" and p[2] == "interface":
            out.setdefault(p[3].split(".")[0], []).append(p[1])
    return out
