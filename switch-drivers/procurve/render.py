"""Render the HARMLESS tagging config for ProCurve from ``templates/harmless.j2`` (pure)."""
from __future__ import annotations

from pathlib import Path

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.procurve.parse import _port_key, format_ports, parse_config, port_states
from harmless.switch_drivers.rendering import OWN_VLAN_PREFIX, VLAN_NAME, template_env

_ENV = template_env(Path(__file__).parent / "templates")


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange], current: str | None = None) -> str:
    """ProCurve config: per HARMLESS VLAN, its access port untagged and the trunk port(s) tagged.

    Args:
        access: one port per VLAN (ProCurve port names ``7``/``A1``); ``qinq`` is not supported.
        trunks: each trunk port is tagged in every VID of its ``vids``.
        current: the device's running config; when given, HARMLESS VLANs (name prefix ``harmless-``) of an
            earlier plan that no other port uses are removed (``no vlan N``).

    Returns:
        Config text (``vlan`` blocks sorted by VID, then ``no vlan`` lines). Same input → same text.

    Raises:
        ValueError: bad port name, VID, VLAN name, QinQ asked, a port changed twice, one VID named twice.
    """
    names: dict[int, str] = {}
    untagged: dict[int, set[str]] = {}
    tagged: dict[int, set[str]] = {}
    seen: set[str] = set()
    for a in access:
        _port_key(a.interface)
        if a.qinq:
            raise ValueError(f"port {a.interface}: QinQ is not supported by the ProCurve driver")
        if not 1 <= a.vid <= 4094 or isinstance(a.vid, bool):
            raise ValueError(f"port {a.interface}: VLAN id {a.vid!r} is outside 1..4094")
        if not VLAN_NAME.match(a.vlan_name or ""):
            raise ValueError(f"port {a.interface}: VLAN name {a.vlan_name!r} must be 1-32 chars of [A-Za-z0-9_.-]")
        if names.get(a.vid, a.vlan_name) != a.vlan_name:
            raise ValueError(f"VLAN {a.vid} is given two names: {names[a.vid]!r} and {a.vlan_name!r}")
        if a.interface in seen:
            raise ValueError(f"port {a.interface} is changed twice")
        seen.add(a.interface)
        names[a.vid] = a.vlan_name
        untagged.setdefault(a.vid, set()).add(a.interface)
    for t in trunks:
        _port_key(t.interface)
        if t.interface in seen:
            raise ValueError(f"port {t.interface} is changed twice")
        seen.add(t.interface)
        for vid in t.vids:
            if not isinstance(vid, int) or isinstance(vid, bool) or not 1 <= vid <= 4094:
                raise ValueError(f"port {t.interface}: VLAN id {vid!r} is outside 1..4094")
            tagged.setdefault(vid, set()).add(t.interface)
    vids = sorted(set(untagged) | set(tagged))
    rows = [(vid, names.get(vid, ""), format_ports(untagged.get(vid, ())), format_ports(tagged.get(vid, ())))
            for vid in vids]
    remove: list[int] = []
    if current:
        _host, vlans = parse_config(current)
        states = port_states(current)
        used = set()
        for p, st in states.items():
            if p not in seen:
                used |= {st.access_vid} | set(st.allowed_vids or ())
        remove = sorted(v.vid for v in vlans.values() if v.name.startswith(OWN_VLAN_PREFIX)
                        and v.vid not in set(vids) and v.vid not in used)
    return _ENV.get_template("harmless.j2").render(vlans=rows, remove_vlans=remove)
