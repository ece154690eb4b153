"""Render the HARMLESS tagging config for Junos from ``templates/harmless.j2`` (pure; ELS or non-ELS syntax)."""
from __future__ import annotations

import re
from pathlib import Path

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.junos.ranges import range_commands
from harmless.switch_drivers.rendering import template_env
from harmless.switch_drivers.vids import check_vid

TEMPLATE_DIR = Path(__file__).parent / "templates"
_ENV = template_env(TEMPLATE_DIR)
#: Junos VLAN names: a letter, then letters, digits, ``-``, ``_``, ``.`` (at most 64 characters)
_VLAN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]{0,63}$")
_INTERFACE = re.compile(r"^((ge|xe|et|mge|fe)-\d+/\d+/\d+|ae\d+)$")
#: syntax name -> the statement that sets a port's 802.1Q mode
MODE_KEYWORD = {"els": "interface-mode", "legacy": "port-mode"}
QINQ_UNSUPPORTED = ("Junos QinQ is not supported by this driver: it needs platform-specific units "
                    "(ELS: flexible-vlan-tagging, encapsulation extended-vlan-bridge, input-vlan-map push; "
                    "non-ELS: vlans dot1q-tunneling) that are neither rendered nor tested")


def _check_port(vid: int, interface: str, seen: set[str]) -> None:
    """A valid VID on a Junos switch port changed once (``seen``: the ports changed so far, updated)."""
    check_vid(vid, interface)
    if not _INTERFACE.match(interface or ""):
        raise ValueError(f"interface name {interface!r} is not a Junos switch port (e.g. ge-0/0/7, xe-0/0/1, ae0)")
    if interface in seen:
        raise ValueError(f"interface {interface} is changed twice")
    seen.add(interface)


def _access_vlans(access: list[AccessPortChange], seen: set[str]) -> dict[int, str]:
    """VID → VLAN name of the access ports (checked: port, no QinQ, Junos VLAN name, one name per VID and VID per
    name)."""
    vlans: dict[int, str] = {}
    for a in access:
        _check_port(a.vid, a.interface, seen)
        if a.qinq:
            raise ValueError(f"{a.interface}: {QINQ_UNSUPPORTED}")
        if not _VLAN_NAME.match(a.vlan_name or ""):
            raise ValueError(f"{a.interface}: VLAN name {a.vlan_name!r} must start with a letter and be 1-64 chars "
                             "of [A-Za-z0-9_.-]")
        if vlans.get(a.vid, a.vlan_name) != a.vlan_name:
            raise ValueError(f"VLAN {a.vid} is given two names: {vlans[a.vid]!r} and {a.vlan_name!r}")
        if a.vlan_name in vlans.values() and vlans.get(a.vid) != a.vlan_name:
            raise ValueError(f"VLAN name {a.vlan_name!r} is given to two VIDs")
        vlans[a.vid] = a.vlan_name
    return vlans


#: link-local protocols of ``protocols layer2-control mac-rewrite interface X protocol P`` that are HARMLESS protocols
#: (Junos CLI Reference, ``protocol (Layer 2 Protocol Tunneling)``, EX2300/3400/4300/4600/4650 and QFX syntax)
L2PT_PROTOCOLS = ("lldp", "stp", "cdp", "vtp", "lacp", "udld")
L2PT_LEGACY = ("non-ELS EX switches tunnel per Q-in-Q VLAN ('vlans V dot1q-tunneling layer2-protocol-tunneling'), "
               "which HARMLESS's per-port VLANs are not")


def _l2pt_rows(access: list[AccessPortChange], syntax: str, tunnelled: set[str]) -> list[tuple[str, list[str]]]:
    """``[(interface, protocols)]`` of the ELS ``layer2-control mac-rewrite`` statements: access ports with ``l2pt``,
    and those in ``tunnelled`` (they tunnel something now) with only the ``delete``, so a tunnel the inventory does
    not ask for does not survive the migration.

    Raises:
        ValueError: ``l2pt`` on a non-ELS switch, or a protocol Junos does not tunnel.
    """
    rows = []
    for a in access:
        bad = [p for p in a.l2pt if p not in L2PT_PROTOCOLS]
        if a.l2pt and syntax != "els":
            raise ValueError(f"{a.interface}: {L2PT_LEGACY}")
        if bad:
            raise ValueError(f"{a.interface}: Junos does not tunnel {bad[0]} (it can: {', '.join(L2PT_PROTOCOLS)})")
        if syntax == "els" and (a.l2pt or a.interface in tunnelled):
            rows.append((a.interface, [p for p in L2PT_PROTOCOLS if p in a.l2pt]))
    return rows


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange], syntax: str = "els",
                  vlan_side: dict[str, list[str]] | None = None, tunnelled: set[str] | None = None,
                  current: str | None = None) -> str:
    """Render the ``set``/``delete`` candidate that makes each access port its own VLAN and trunks carry them.

    Args:
        access: access-port changes; VIDs 1..4094, VLAN names per Junos rules (a letter first, 1-64 chars of
            ``[A-Za-z0-9_.-]``); ``qinq`` is refused (see :data:`QINQ_UNSUPPORTED`).
        trunks: trunk changes; each carries exactly its ``vids`` (trunk-only VIDs get the trunk's ``names``, else
            VLANs named ``vlan<VID>``;
            a ``shared`` one keeps its other members: its ``family ethernet-switching`` and its non-ELS VLAN-side
            memberships are not deleted;
            ``bring_up`` deletes its ``disable``);
            ``stag_tpid`` is irrelevant without QinQ and ignored.
        syntax: ``"els"`` (``interface-mode``; EX2300/3400/4300, QFX, ...) or ``"legacy"`` (``port-mode``;
            non-ELS EX2200/3300/4200, ...).
        vlan_side: non-ELS VLAN-side memberships the device has today, ``{interface: [VLAN names]}`` (from
            ``vlans NAME interface IF.0``, see :func:`parse.vlan_side_members`); for migrated ports they are
            deleted too, else the port would stay in its old VLAN as well.
        tunnelled: ports whose Layer 2 protocol tunnelling the device has today (port model ``l2pt``); their
            ``mac-rewrite`` statements are deleted when their ``l2pt`` is empty.
        current: the device's configuration as HARMLESS found it (the ranges before HARMLESS took ports out of them:
            the driver's ``found_config`` on a migrated switch, else the running config): migrated ports that are
            members of an ``interface-range`` are taken out of it and given its other statements as their own
            (:mod:`.ranges`), in commands at the end; the same commands on every render of the same plan.

    Returns:
        ``set vlans`` lines (sorted by VID), then per access port and per trunk a ``delete`` of its
        ``family ethernet-switching`` (and of its VLAN-side memberships) followed by the ``set`` lines; on ELS per
        access port with ``l2pt`` (or in ``tunnelled``) a ``delete protocols layer2-control mac-rewrite interface X``
        and one ``set ... protocol P`` per ``l2pt`` protocol (Junos "Layer 2 Protocol Tunneling (L2PT)": the switch rewrites their destination to
        01:00:0c:cd:cd:d0 on ingress and restores it on egress). Same input → same text.

    Raises:
        ValueError: bad VID, VLAN name, interface name or syntax; QinQ requested; one VID given two names;
            one interface changed twice; ``l2pt`` on a non-ELS switch or with a protocol Junos does not tunnel.
    """
    if syntax not in MODE_KEYWORD:
        raise ValueError(f"Junos VLAN syntax {syntax!r} is not one of {sorted(MODE_KEYWORD)}")
    seen: set[str] = set()
    vlans = _access_vlans(access, seen)
    rows = []
    for t in trunks:
        for vid in t.vids:
            check_vid(vid, t.interface)
        _check_port(min(t.vids, default=1), t.interface, seen)
        for vid in t.vids:
            vlans.setdefault(vid, dict(t.names).get(vid, f"vlan{vid}"))
        rows.append((t.interface, [vlans[v] for v in sorted(set(t.vids))], t.shared, t.bring_up))
    side = vlan_side or {}
    moves = range_commands(current, {**{a.interface: False for a in access}, **{t.interface: t.shared for t in trunks}})
    # a shared trunk keeps its VLAN-side memberships too: they are the VLANs it carries for the operator
    stale = [(name, ifname) for ifname in [a.interface for a in access] + [t.interface for t in trunks if not t.shared]
             for name in sorted(side.get(ifname, ()))]
    no_learning = sorted({vlans[a.vid] for a in access if a.no_learning})
    return _ENV.get_template("harmless.j2").render(mode_kw=MODE_KEYWORD[syntax], vlans=sorted(vlans.items()),
                                                   access=[(a.interface, a.vlan_name) for a in access], trunks=rows,
                                                   stale=stale, l2pt=_l2pt_rows(access, syntax, tunnelled or set()),
                                                   ranges=moves, no_learning=no_learning,
                                                   learning_kw=LEARNING_KEYWORD[syntax])


#: syntax name -> the statement under ``vlans NAME`` that turns MAC learning off for the VLAN (Junos
#: ``no-mac-learning``: ELS hierarchy ``[edit vlans vlan-name switch-options]``, non-ELS EX ``[edit vlans vlan-name]``)
LEARNING_KEYWORD = {"els": "switch-options no-mac-learning", "legacy": "no-mac-learning"}


def render_port_admin(interface: str, enabled: bool) -> str:
    """``set interfaces X disable`` (or ``delete interfaces X disable``): one port taken down or back up (pure).

    Raises:
        ValueError: not a Junos switch port name.
    """
    if not _INTERFACE.match(interface or ""):
        raise ValueError(f"interface name {interface!r} is not a Junos switch port (e.g. ge-0/0/7, xe-0/0/1, ae0)")
    return f"{'delete' if enabled else 'set'} interfaces {interface} disable\n"
