"""ProCurve syntax for the netmiko line-wise workflow: VLAN-semantic diff and restore (pure)."""
from __future__ import annotations

from harmless.switch_drivers.netmiko_cli.dialects import Dialect
from harmless.switch_drivers.procurve.parse import format_ports, parse_config, port_states, vlan_names
from harmless.switch_drivers.procurve.render import render_config


def strip_running(raw: str) -> str:
    """``show running-config`` without the ``Running configuration:`` header and blank leading lines."""
    lines = [ln.rstrip() for ln in raw.splitlines()]
    while lines and (not lines[0].strip() or lines[0].startswith("Running configuration")):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


def _removed(candidate: str) -> list[int]:
    return [int(ln.split()[2]) for ln in candidate.splitlines() if ln.startswith("no vlan ")]


def diff(running: str, candidate: str) -> str:
    """What sending ``candidate`` changes, by VLAN membership (ProCurve prints merged port lists, so a
    line-by-line comparison would report changes that are none). '' when nothing changes.

    Returns:
        Lines such as ``+vlan 107``, ``+   name "harmless-sw2-p1"``, ``+   untagged 7``, ``+   tagged 25``,
        ``-vlan 105``.
    """
    _h, have = parse_config(running)
    _h, want = parse_config(candidate)
    out = []
    for vid, w in sorted(want.items()):
        h = have.get(vid)
        lines = []
        if w.name and (h is None or h.name != w.name):
            lines.append(f'+   name "{w.name}"')
        new_u = set(w.untagged) - set(h.untagged if h else ())
        new_t = set(w.tagged) - set(h.tagged if h else ())
        if new_u:
            lines.append(f"+   untagged {format_ports(new_u)}")
        if new_t:
            lines.append(f"+   tagged {format_ports(new_t)}")
        if h is None or lines:
            out += [f"+vlan {vid}"] + lines
    out += [f"-vlan {vid}" for vid in _removed(candidate) if vid in have]
    return "\n".join(out)


def transform(running: str, target: str) -> list[str]:
    """Lines that turn ``running`` into ``target`` (VLANs, names, memberships); [] when equal.

    Order: per target VLAN create/rename, ``untagged`` (moves ports out of their current untagged VLAN),
    ``tagged``, ``no tagged``, ``no untagged`` (ports the target leaves without any untagged VLAN); then
    ``no vlan`` for VLANs only in ``running``. Hostname and non-VLAN lines are not touched (by design).
    """
    _h, have = parse_config(running)
    _h, want = parse_config(target)
    target_untagged = {p for v in want.values() for p in v.untagged}
    out: list[str] = []
    for vid, w in sorted(want.items()):
        h = have.get(vid)
        lines = []
        if h is None or h.name != w.name:
            lines.append(f'   name "{w.name}"')
        for word, wants, has in (("untagged", w.untagged, h.untagged if h else ()),
                                 ("tagged", w.tagged, h.tagged if h else ())):
            add = set(wants) - set(has)
            if add:
                lines.append(f"   {word} {format_ports(add)}")
        if h is not None:
            drop_t = set(h.tagged) - set(w.tagged)
            if drop_t:
                lines.append(f"   no tagged {format_ports(drop_t)}")
            drop_u = set(h.untagged) - set(w.untagged) - target_untagged
            if drop_u:
                lines.append(f"   no untagged {format_ports(drop_u)}")
        if lines:
            out += [f"vlan {vid}"] + lines + ["   exit"]
    out += [f"no vlan {vid}" for vid in sorted(set(have) - set(want))]
    return out


PROCURVE = Dialect(
    device_type="hp_procurve", show_running="show running-config", strip_running=strip_running,
    render=render_config, diff=diff, transform=transform, port_states=port_states, vlans=vlan_names,
    error_patterns=(r"Invalid input", r"^\s*Error", r"Unable to", r"cannot be", r"not allowed"),
    protected=("password ", "aaa ", "crypto ", "ip ssh", "snmp-server ", "operator ", "manager ", "hostname "),
    qinq=False, stag_tpids=(),
    l2pt_source="ArubaOS-Switch/ProVision has no Layer 2 protocol tunnelling: even in QinQ mode (a reboot into a new "
                "configuration) only customer STP/GVRP BPDUs cross as multicast, LLDP and the other link-local "
                "protocols are dropped at customer ports (HPE Advanced Traffic Management Guide, Effects of QinQ on "
                "other switch features)",
)
