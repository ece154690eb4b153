"""Render the HARMLESS tagging config for IOS from ``templates/harmless.j2`` (pure)."""
from __future__ import annotations

import re
from pathlib import Path

import jinja2

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.ios.vids import MAX_VID, MIN_VID, format_vid_ranges

TEMPLATE_DIR = Path(__file__).parent / "templates"
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), trim_blocks=True,
                          lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                          autoescape=False)
_VLAN_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,32}$")
_INTERFACE = re.compile(r"^[A-Za-z][A-Za-z\-]*\d+(/\d+)*(\.\d+)?$")


def _check_vid(vid: int, what: str) -> None:
    if not isinstance(vid, int) or isinstance(vid, bool) or not MIN_VID <= vid <= MAX_VID:
        raise ValueError(f"{what}: VLAN id {vid!r} is outside {MIN_VID}..{MAX_VID}")


def _check_interface(name: str) -> None:
    if not _INTERFACE.match(name or ""):
        raise ValueError(f"interface name {name!r} is not an IOS interface name (e.g. FastEthernet0/7)")


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
    """Render the merge candidate that makes each access port its own VLAN and trunks carry them.

    Args:
        access: access-port changes; VIDs 1..4094, names 1-32 chars of ``[A-Za-z0-9_.-]``.
        trunks: trunk changes; each carries exactly its ``vids`` (IOS range syntax in the output).

    Returns:
        IOS config text: ``vlan`` blocks (sorted by VID; trunk-only VIDs unnamed), then access
        ``interface`` blocks, then trunk blocks, ending with ``end``. Same input → same text.

    Raises:
        ValueError: bad VID, VLAN name or interface name; one VID given two names; one interface
            changed twice.
    """
    vlans: dict[int, str] = {}
    seen: set[str] = set()
    for a in access:
        _check_vid(a.vid, a.interface)
        _check_interface(a.interface)
        if not _VLAN_NAME.match(a.vlan_name or ""):
            raise ValueError(f"{a.interface}: VLAN name {a.vlan_name!r} must be 1-32 chars of [A-Za-z0-9_.-]")
        if vlans.get(a.vid, a.vlan_name) != a.vlan_name:
            raise ValueError(f"VLAN {a.vid} is given two names: {vlans[a.vid]!r} and {a.vlan_name!r}")
        vlans[a.vid] = a.vlan_name
        if a.interface in seen:
            raise ValueError(f"interface {a.interface} is changed twice")
        seen.add(a.interface)
    trunk_rows = []
    for t in trunks:
        _check_interface(t.interface)
        if t.interface in seen:
            raise ValueError(f"interface {t.interface} is changed twice")
        seen.add(t.interface)
        for vid in t.vids:
            _check_vid(vid, t.interface)
            vlans.setdefault(vid, "")
        trunk_rows.append((t.interface, format_vid_ranges(t.vids)))
    return _ENV.get_template("harmless.j2").render(vlans=sorted(vlans.items()), access=list(access),
                                                   trunks=trunk_rows)
