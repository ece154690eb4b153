"""ProCurve / Aruba-OS switch running config → VLANs and per-port state (pure; ttp).

ProCurve ports are numbers (``7``) or module-letter + number (``A1``); port lists look like ``1-6,8,A1-A4``.
A port is untagged in at most one VLAN and tagged in any number of VLANs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harmless.switch_drivers.base import PortVlanState

_TTP = """
<group name="hostname">
hostname "{{ hostname | ORPHRASE }}"
</group>
<group name="vlans">
vlan {{ vid | to_int }}
   name "{{ name | ORPHRASE }}"
   untagged {{ untagged }}
   tagged {{ tagged }}
   no untagged {{ no_untagged }}
   exit {{ _end_ }}
</group>
"""
_PORT = re.compile(r"^([A-Z]?)(\d+)$")


def _port_key(port: str) -> tuple[str, int]:
    m = _PORT.match(port)
    if not m:
        raise ValueError(f"bad ProCurve port {port!r} (e.g. 7 or A1)")
    return m.group(1), int(m.group(2))


def parse_ports(text: str) -> tuple[str, ...]:
    """``"1-3,7,A1-A2"`` → ``("1", "2", "3", "7", "A1", "A2")`` (sorted, distinct).

    Raises:
        ValueError: malformed item or a range across modules / reversed.
    """
    out: set[str] = set()
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        lo, sep, hi = item.partition("-")
        (mlo, nlo), (mhi, nhi) = _port_key(lo), _port_key(hi if sep else lo)
        if mlo != mhi or nlo > nhi:
            raise ValueError(f"bad ProCurve port range {item!r}")
        out.update(f"{mlo}{n}" for n in range(nlo, nhi + 1))
    return tuple(sorted(out, key=_port_key))


def format_ports(ports) -> str:
    """Ports in ProCurve list syntax, runs of two or more as ``a-b`` (``["1","2","7"]`` → ``"1-2,7"``)."""
    keys = sorted({_port_key(p) for p in ports})
    runs: list[list[tuple[str, int]]] = []
    for k in keys:
        if runs and runs[-1][-1][0] == k[0] and runs[-1][-1][1] + 1 == k[1]:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ",".join(f"{r[0][0]}{r[0][1]}" + (f"-{r[-1][0]}{r[-1][1]}" if len(r) > 1 else "") for r in runs)


@dataclass(frozen=True)
class Vlan:
    """One ``vlan`` block: VID, name, untagged and tagged ports."""

    vid: int
    name: str
    untagged: tuple[str, ...] = ()
    tagged: tuple[str, ...] = ()


def parse_config(text: str) -> tuple[str, dict[int, Vlan]]:
    """``(hostname, {vid: Vlan})`` from ``show running-config`` (ttp template above).

    Raises:
        ValueError: a malformed port list.
    """
    from ttp import ttp

    parser = ttp(data=text, template=_TTP)
    parser.parse()
    res = parser.result()[0][0] if parser.result() and parser.result()[0] else {}
    host = res.get("hostname", {})
    if isinstance(host, list):
        host = host[0] if host else {}
    groups = res.get("vlans", [])
    if isinstance(groups, dict):
        groups = [groups]
    vlans = {}
    for g in groups:
        vid = int(g["vid"])
        vlans[vid] = Vlan(vid, g.get("name", ""), parse_ports(g.get("untagged", "")), parse_ports(g.get("tagged", "")))
    return host.get("hostname", ""), vlans


def port_states(text: str) -> dict[str, PortVlanState]:
    """Per-port state: a port with tagged VLANs is a ``trunk`` (native = its untagged VLAN or None, allowed =
    tagged ∪ untagged), otherwise ``access`` with its untagged VLAN. Ports in no VLAN are left out."""
    _host, vlans = parse_config(text)
    untagged: dict[str, int] = {}
    tagged: dict[str, set[int]] = {}
    for v in vlans.values():
        for p in v.untagged:
            untagged[p] = v.vid
        for p in v.tagged:
            tagged.setdefault(p, set()).add(v.vid)
    out = {}
    for p in sorted(set(untagged) | set(tagged), key=_port_key):
        if p in tagged:
            allowed = set(tagged[p]) | ({untagged[p]} if p in untagged else set())
            out[p] = PortVlanState(p, "trunk", native_vid=untagged.get(p), allowed_vids=tuple(sorted(allowed)))
        else:
            out[p] = PortVlanState(p, "access", access_vid=untagged[p])
    return out


def vlan_names(text: str) -> dict[int, str]:
    """``{vid: name}`` of every VLAN in the config."""
    return {vid: v.name for vid, v in parse_config(text)[1].items()}
