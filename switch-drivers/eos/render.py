"""Render the HARMLESS tagging config for Arista EOS from ``templates/harmless.j2`` (pure)."""
from __future__ import annotations

import re
from pathlib import Path

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.eos.vids import format_vid_ranges
from harmless.switch_drivers.rendering import collect_vlans, template_env
from harmless.switch_drivers.switchport import interface_lines

__all__ = ["L2PT_PROTOCOLS", "STAG_TPIDS", "TEMPLATE_DIR", "l2pt_profiles", "profiles_now", "render_config",
           "render_port_admin"]

TEMPLATE_DIR = Path(__file__).parent / "templates"
_ENV = template_env(TEMPLATE_DIR)
_INTERFACE = re.compile(r"^(Ethernet\d+(/\d+){0,2}|Port-Channel\d+)$")
#: TPIDs EOS can put on a trunk's tags (``switchport dot1q ethertype``; EOS TOI "Configurable TPID", 4.15.2F+,
#: platform dependent). 0x8100 is the IEEE 802.1Q default, 0x88a8 the IEEE 802.1ad S-tag TPID.
STAG_TPIDS = (0x8100, 0x88A8)
#: link-local protocols EOS forwards instead of trapping them to the CPU (EOS User Manual, "Layer 2 Protocol
#: Forwarding": profiles of ``<protocol> [tagged|untagged] forward`` for PAUSE, LACP, LLDP, MACsec, STP, E-LMI, IS-IS,
#: micro-BFD; PVST on some platforms) that are also HARMLESS protocols
L2PT_PROTOCOLS = ("lldp", "stp", "lacp")


def l2pt_profiles(access: list[AccessPortChange], trunks: list[TrunkChange]) -> tuple[
        list[tuple[str, list[str]]], dict[str, str | None], dict[str, str | None]]:
    """The L2 protocol forwarding profiles for the ports' ``l2pt`` (pure).

    An access port forwards its protocols' untagged PDUs (``harmless-<protocols>``); a trunk forwards the tagged
    PDUs of the protocols its ports forward (``harmless-tagged-<protocols>``): those are the controller's frames
    coming back from the server in the port's VLAN. Bridged as data, they keep their destination MAC, so br-otc has
    nothing to rewrite.

    Returns:
        ``([(profile, lines)], {access interface: profile or None}, {trunk interface: profile or None})``.

    Raises:
        ValueError: a protocol EOS does not forward (:data:`L2PT_PROTOCOLS`).
    """
    profiles: dict[str, list[str]] = {}
    by_vid: dict[int, tuple[str, ...]] = {}
    access_profile: dict[str, str | None] = {}
    for a in access:
        bad = [p for p in a.l2pt if p not in L2PT_PROTOCOLS]
        if bad:
            raise ValueError(f"{a.interface}: EOS does not forward {bad[0]} (it can: {', '.join(L2PT_PROTOCOLS)})")
        protos = tuple(p for p in L2PT_PROTOCOLS if p in a.l2pt)
        by_vid[a.vid] = protos
        access_profile[a.interface] = _profile(profiles, protos, "untagged") if protos else None
    trunk_profile = {}
    for t in trunks:
        protos = tuple(p for p in L2PT_PROTOCOLS if any(p in by_vid.get(v, ()) for v in t.vids))
        trunk_profile[t.interface] = _profile(profiles, protos, "tagged") if protos else None
    return sorted(profiles.items()), access_profile, trunk_profile


def _profile(profiles: dict[str, list[str]], protos: tuple[str, ...], kind: str) -> str:
    name = "harmless-" + ("tagged-" if kind == "tagged" else "") + "-".join(protos)
    profiles[name] = [f"{p} {kind} forward" for p in protos]
    return name


def _check_interface(name: str) -> None:
    if not _INTERFACE.match(name or ""):
        raise ValueError(f"interface name {name!r} is not an EOS switch port (e.g. Ethernet7, Ethernet1/1, "
                         "Port-Channel10)")


def profiles_now(config_text: str) -> dict[str, str]:
    """``{interface: L2 protocol forwarding profile}`` of the ports that have one in ``config_text`` (pure)."""
    return {name: ln.split()[-1] for name, lines in interface_lines(config_text).items() for ln in lines
            if re.match(r"l2-protocol forwarding profile \S+$", ln)}


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange],
                  profiled: dict[str, str] | None = None) -> str:
    """Render the merge candidate that makes each access port its own VLAN and trunks carry them.

    Args:
        access: access-port changes; VIDs 1..4094, names 1-32 chars of ``[A-Za-z0-9_.-]``; ``qinq`` ports
            become ``switchport mode dot1q-tunnel`` ports of their VLAN (802.1ad customer ports).
        trunks: trunk changes; each carries exactly its ``vids`` (a ``shared`` one also what it carries now:
            ``switchport trunk allowed vlan add``; the configuration session's diff is semantic, so a second merge
            is empty); ``stag_tpid`` 0x8100 (default, nothing rendered) or 0x88a8 (``switchport dot1q ethertype
            0x88a8``, only when a QinQ port exists); ``bring_up`` adds ``no shutdown``.
        Access ports with ``l2pt`` get an L2 protocol forwarding profile, their trunk the matching tagged one
        (:func:`l2pt_profiles`); an access port without ``l2pt`` that has a profile today (``profiled``,
        :func:`profiles_now` of the running config) and a trunk whose HARMLESS profile is no longer needed get
        ``no l2-protocol forwarding profile``.

    Returns:
        EOS config text with 3-space indentation: ``vlan`` blocks (sorted by VID; trunk-only VIDs unnamed),
        the ``l2-protocol`` block when a port forwards link-local protocols, access ``interface`` blocks, trunk
        blocks, ``end``. Same input → same text. A change with
        ``no_learning`` gets ``no switchport mac address learning`` on its interface (EOS learns per interface; the
        access port and the trunk are the only members of a HARMLESS VLAN and the trunk carries only HARMLESS VLANs).

    Raises:
        ValueError: bad VID, VLAN name, interface name or TPID; one VID given two names; one interface
            changed twice; a link-local protocol EOS does not forward.
    """
    vlans, _seen = collect_vlans(access, trunks, _check_interface)
    profiles, access_profile, trunk_profile = l2pt_profiles(access, trunks)
    any_qinq = any(a.qinq for a in access)
    rows = []
    for t in trunks:
        if t.stag_tpid not in STAG_TPIDS:
            raise ValueError(f"{t.interface}: S-tag TPID {t.stag_tpid:#06x} is not one EOS can set "
                             f"({', '.join(f'{x:#06x}' for x in STAG_TPIDS)})")
        tpid = f"{t.stag_tpid:#06x}" if any_qinq and t.stag_tpid != 0x8100 else None
        rows.append((t.interface, format_vid_ranges(t.vids), tpid, "add " if t.shared else "", t.bring_up,
                     trunk_profile[t.interface], t.no_learning))
    now = profiled or {}
    unprofile = {a.interface for a in access if access_profile[a.interface] is None and a.interface in now}
    unprofile |= {t.interface for t in trunks if trunk_profile[t.interface] is None
                  and now.get(t.interface, "").startswith("harmless-")}
    return _ENV.get_template("harmless.j2").render(vlans=sorted(vlans.items()), access=list(access), trunks=rows,
                                                   profiles=profiles, access_profile=access_profile,
                                                   unprofile=unprofile)


def render_port_admin(interface: str, enabled: bool) -> str:
    """``interface X`` / ``shutdown`` (or ``no shutdown``) / ``end`` (pure). Raises ValueError for a bad name."""
    _check_interface(interface)
    return f"interface {interface}\n   {'no shutdown' if enabled else 'shutdown'}\n!\nend\n"
