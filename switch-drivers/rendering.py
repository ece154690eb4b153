"""Template rendering helpers shared by the drivers (pure): one jinja2 setup, one input check for Cisco-style VLANs.

Every driver renders its ``templates/harmless.j2`` with the same jinja2 settings (:func:`template_env`). IOS and
EOS (and any OS with the same VLAN rules) validate the access/trunk changes the same way
(:func:`collect_vlans`): VIDs 1..4094, VLAN names 1-32 chars of ``[A-Za-z0-9_.-]`` (the IOS ``name`` limit, which
EOS accepts too), one name per VID, each interface changed once.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import jinja2

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.vids import check_vid

__all__ = ["OWN_VLAN_PREFIX", "VLAN_NAME", "collect_vlans", "template_env"]

#: VLAN names HARMLESS writes start with this (see ``harmless.plan.vlan_name``: ``harmless-<switch>-p<n>``);
#: only such VLANs are ever removed by a render.
OWN_VLAN_PREFIX = "harmless-"
#: VLAN names accepted on IOS/EOS/ProCurve: 1-32 chars of ``[A-Za-z0-9_.-]``
VLAN_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,32}$")


def template_env(template_dir: Path) -> jinja2.Environment:
    """The jinja2 environment for a driver's templates folder: strict undefined, no autoescape, blocks trimmed,
    trailing newline kept (so a rendered config ends like the template)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir)), trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                              autoescape=False)


def collect_vlans(access: Sequence[AccessPortChange], trunks: Sequence[TrunkChange],
                  check_interface: Callable[[str], None]) -> tuple[dict[int, str], set[str]]:
    """Validate access/trunk changes and collect the VLANs they need (Cisco-style rules, see module doc).

    Args:
        access: access-port changes (their VID gets their ``vlan_name``).
        trunks: trunk changes (VIDs no access port names get the trunk's ``names``, else stay unnamed, ``""``).
        check_interface: the driver's interface-name check (raises ValueError).

    Returns:
        ``({vid: name}, {every changed interface})``.

    Raises:
        ValueError: bad VID, VLAN name or interface name; one VID given two names; one interface changed twice.
    """
    vlans: dict[int, str] = {}
    seen: set[str] = set()

    def claim(interface: str) -> None:
        if interface in seen:
            raise ValueError(f"interface {interface} is changed twice")
        seen.add(interface)

    for a in access:
        check_vid(a.vid, a.interface)
        check_interface(a.interface)
        if not VLAN_NAME.match(a.vlan_name or ""):
            raise ValueError(f"{a.interface}: VLAN name {a.vlan_name!r} must be 1-32 chars of [A-Za-z0-9_.-]")
        if vlans.get(a.vid, a.vlan_name) != a.vlan_name:
            raise ValueError(f"VLAN {a.vid} is given two names: {vlans[a.vid]!r} and {a.vlan_name!r}")
        vlans[a.vid] = a.vlan_name
        claim(a.interface)
    for t in trunks:
        check_interface(t.interface)
        claim(t.interface)
        named = dict(t.names)
        for vid in t.vids:
            check_vid(vid, t.interface)
            vlans.setdefault(vid, named.get(vid, ""))
    return vlans, seen
