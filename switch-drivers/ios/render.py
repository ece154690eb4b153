"""Render the HARMLESS tagging config for IOS from ``templates/harmless.j2`` (pure)."""
from __future__ import annotations

import re
from pathlib import Path

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.ciscomodel import L2PT_LINE
from harmless.switch_drivers.l2pt import PROTOCOLS
from harmless.switch_drivers.ios.parse import interface_lines, parse_port_states, parse_vlans
from harmless.switch_drivers.ios.vids import format_vid_ranges
from harmless.switch_drivers.rendering import OWN_VLAN_PREFIX, collect_vlans, template_env
from harmless.switch_drivers.switchport import fold_allowed

__all__ = ["OWN_VLAN_PREFIX", "TEMPLATE_DIR", "render_config", "render_port_admin", "no_learning_vids"]

TEMPLATE_DIR = Path(__file__).parent / "templates"
_ENV = template_env(TEMPLATE_DIR)
_INTERFACE = re.compile(r"^[A-Za-z][A-Za-z\-]*\d+(/\d+)*(\.\d+)?$")


def _check_interface(name: str) -> None:
    if not _INTERFACE.match(name or ""):
        raise ValueError(f"interface name {name!r} is not an IOS interface name (e.g. FastEthernet0/7)")


def _current_interfaces(current: str | None) -> dict[str, list[str]]:
    return interface_lines(current) if current else {}


def _access_cleanup(lines: list[str]) -> list[str]:
    """``no`` lines that a merge to access/dot1q-tunnel would otherwise leave on a former trunk."""
    out = []
    if any(ln.startswith("switchport trunk allowed vlan") for ln in lines):
        out.append("no switchport trunk allowed vlan")
    if any(ln.startswith("switchport trunk native vlan") for ln in lines):
        out.append("no switchport trunk native vlan")
    return out


def l2pt_lines(protocols) -> list[str]:
    """IOS interface lines that tunnel ``protocols`` (Catalyst command references, ``l2protocol-tunnel``: one line
    per protocol; LACP, PAgP and UDLD only as ``point-to-point``), in :data:`~..l2pt.PROTOCOLS` order.

    Raises:
        ValueError: a name that is not a protocol of :mod:`harmless.switch_drivers.l2pt`.
    """
    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad:
        raise ValueError(f"unknown link-local protocol {bad[0]!r} (known: {', '.join(PROTOCOLS)})")
    return [f"l2protocol-tunnel {'point-to-point ' if p.point_to_point else ''}{p.name}"
            for p in PROTOCOLS.values() if p.name in protocols]


def _l2pt_cleanup(lines: list[str], wanted: list[str]) -> list[str]:
    """``no`` lines for the port's ``l2protocol-tunnel`` lines that are not ``wanted`` (the render sets exactly the
    inventory's protocols; thresholds and CoS lines are left alone)."""
    return [f"no {ln}" for ln in lines if L2PT_LINE.match(ln) and ln not in wanted]


def _trunk_cleanup(lines: list[str], vids: tuple[int, ...]) -> list[str]:
    """``no`` lines for a port turned trunk: a stale access VLAN, a native VLAN that is one of ``vids``."""
    out = []
    if any(ln.startswith("switchport access vlan") for ln in lines):
        out.append("no switchport access vlan")
    for ln in lines:
        m = re.match(r"switchport trunk native vlan (\d+)$", ln)
        if m and int(m.group(1)) in vids:         # would leave that HARMLESS VLAN untagged on the trunk
            out.append("no switchport trunk native vlan")
    return out


def _allowed(t: TrunkChange, lines: list[str] | None) -> dict:
    """``{"allowed", "add"}`` of a trunk row: exactly its VIDs; for a ``shared`` trunk its current allowed list plus
    its VIDs (None: it carries every VLAN now and keeps doing so), or ``add`` when the current config is unknown."""
    if not t.shared:
        return {"allowed": format_vid_ranges(t.vids), "add": ""}
    if lines is None:
        return {"allowed": format_vid_ranges(t.vids), "add": "add "}
    now = fold_allowed([ln for ln in lines if ln.startswith("switchport trunk allowed vlan")])
    if now is None:
        return {"allowed": None, "add": ""}
    return {"allowed": format_vid_ranges(sorted(set(now) | set(t.vids))), "add": ""}


def _stale_vlans(current: str | None, keep: set[int], changed: set[str],
                 database: dict[int, str] | None = None) -> list[int]:
    """HARMLESS VLANs (name prefix) in ``current`` (or in the VLAN ``database``) that are not in ``keep`` and no
    unchanged port uses."""
    if not current:
        return []
    used: set[int] = set()
    for name, state in parse_port_states(current).items():
        if name in changed:
            continue
        if state.access_vid is not None:
            used.add(state.access_vid)
        if state.allowed_vids is not None:
            used.update(state.allowed_vids)
    known = {**(database or {}), **parse_vlans(current)}
    return sorted(vid for vid, name in known.items()
                  if name.startswith(OWN_VLAN_PREFIX) and vid not in keep and vid not in used)


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange], *, current: str | None = None,
                  trunk_encapsulation: bool = False, database: dict[int, str] | None = None) -> str:
    """Render the merge candidate that makes each access port its own VLAN and trunks carry them.

    Args:
        access: access-port changes; VIDs 1..4094, names 1-32 chars of ``[A-Za-z0-9_.-]``. With ``qinq`` the
            port becomes ``switchport mode dot1q-tunnel`` (its VID is the outer S-tag, TPID 0x8100); its ``l2pt``
            protocols become ``l2protocol-tunnel`` lines after the mode (:func:`l2pt_lines`: IOS accepts them only
            on an access or dot1q-tunnel port). The trunk gets none: L2PT on the egress trunk would make it forward
            the PDUs unrewritten (the "protocol-tunnel bypass" of the Catalyst configuration guides).
        trunks: trunk changes; each carries exactly its ``vids`` (IOS range syntax in the output); a ``shared`` one
            its current allowed VLANs and its ``vids`` (nothing rendered when it carries every VLAN now;
            ``switchport trunk allowed vlan add`` without ``current``); ``bring_up`` adds ``no shutdown``.
        current: the device's running config (``show running-config`` text) or None. When given, the render
            also removes what a merge would leave behind (the conversion hazards): trunk lines on a port
            turned access, ``switchport access vlan`` on a port turned trunk, a trunk native VLAN that is one
            of the trunk's HARMLESS VIDs, HARMLESS VLANs (name prefix :data:`OWN_VLAN_PREFIX`) of an
            earlier plan that no unchanged port uses (``no vlan N``), and ``l2protocol-tunnel`` lines of an access
            port that its ``l2pt`` does not list.
        database: ``{vid: name}`` of the device's VLAN database (``show vlan``), so that stale HARMLESS VLANs of a VTP
            server, which keeps them out of the running config, are removed too.
        trunk_encapsulation: the platform is ISL-capable (3560/3750/4500/6500: encapsulation defaults to
            "negotiate"); emit ``switchport trunk encapsulation dot1q`` before ``switchport mode trunk``.
            Dot1q-only platforms (2960) reject that command, so it must be False there.

    Returns:
        IOS config text: ``vlan`` blocks (sorted by VID; trunk-only VIDs unnamed), access ``interface``
        blocks, trunk blocks, ``no vlan`` lines, ``end``. Same input → same text. Rendering against the
        config this candidate produces gives the same text without cleanup lines, so a second merge is empty.

    Raises:
        ValueError: bad VID, VLAN name or interface name; one VID given two names; one interface
            changed twice; ``stag_tpid`` other than 0x8100 on a trunk (IOS dot1q-tunnel always uses 0x8100); an
            unknown link-local protocol name.
    """
    for t in trunks:
        if t.stag_tpid != 0x8100:
            raise ValueError(f"{t.interface}: IOS dot1q-tunnel puts TPID 0x8100 on the outer tag, not "
                             f"{t.stag_tpid:#06x}")
    vlans, seen = collect_vlans(access, trunks, _check_interface)
    cur = _current_interfaces(current)
    access_rows = [{"interface": a.interface, "vid": a.vid, "mode": "dot1q-tunnel" if a.qinq else "access",
                    "cleanup": _access_cleanup(cur.get(a.interface, []))
                    + _l2pt_cleanup(cur.get(a.interface, []), l2pt_lines(a.l2pt)), "l2pt": l2pt_lines(a.l2pt)}
                   for a in access]
    trunk_rows = [{"interface": t.interface, **_allowed(t, cur.get(t.interface) if current else None),
                   "cleanup": _trunk_cleanup(cur.get(t.interface, []), tuple(t.vids)), "bring_up": t.bring_up}
                  for t in trunks]
    remove = _stale_vlans(current, set(vlans), seen, database)
    off, on = _learning(access, trunks, current, set(vlans) | set(remove))
    return _ENV.get_template("harmless.j2").render(vlans=sorted(vlans.items()), access=access_rows,
                                                   trunks=trunk_rows, remove_vlans=remove,
                                                   encapsulation=bool(trunk_encapsulation),
                                                   learning_off=format_vid_ranges(off) if off else "",
                                                   learning_on=format_vid_ranges(on) if on else "")


_NO_LEARNING = re.compile(r"^no mac address-table learning vlan (\S+)\s*$", re.M)


def no_learning_vids(config: str | None) -> set[int]:
    """VIDs whose MAC learning the config turns off (``no mac address-table learning vlan LIST``). Pure."""
    out: set[int] = set()
    for m in _NO_LEARNING.finditer(config or ""):
        for item in m.group(1).split(","):
            lo, _, hi = item.partition("-")
            if lo.isdigit() and (hi.isdigit() or not hi):
                out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _learning(access: list[AccessPortChange], trunks: list[TrunkChange], current: str | None,
              ours: set[int]) -> tuple[list[int], list[int]]:
    """``(VIDs to turn MAC learning off for, HARMLESS VIDs to turn it back on for)``: off for the VIDs of changes with
    ``no_learning`` that the device still learns on; back on for HARMLESS's VIDs (``ours``: planned or removed)
    whose learning is off but no longer wanted (e.g. the inventory switched to ``mac_learning: on``). Pure."""
    want = {a.vid for a in access if a.no_learning} | {v for t in trunks if t.no_learning for v in t.vids}
    have = no_learning_vids(current)
    return sorted(want - have), sorted((have & ours) - want)


def render_port_admin(interface: str, enabled: bool) -> str:
    """``interface X`` / ``shutdown`` (or ``no shutdown``) / ``end``: one port taken down or back up (pure).

    Raises:
        ValueError: not an IOS interface name.
    """
    _check_interface(interface)
    return f"interface {interface}\n {'no shutdown' if enabled else 'shutdown'}\n!\nend\n"
