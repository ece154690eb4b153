"""Render the HARMLESS tagging config for Arista EOS from ``templates/harmless.j2`` (pure)."""
from __future__ import annotations

import re
from pathlib import Path

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.eos.vids import format_vid_ranges
from harmless.switch_drivers.rendering import collect_vlans, template_env

__all__ = ["STAG_TPIDS", "TEMPLATE_DIR", "render_config", "render_port_admin"]

TEMPLATE_DIR = Path(__file__).parent / "templates"
_ENV = template_env(TEMPLATE_DIR)
_INTERFACE = re.compile(r"^(Ethernet\d+(/\d+){0,2}|Port-Channel\d+)$")
#: TPIDs EOS can put on a trunk's tags (``switchport dot1q ethertype``; EOS TOI "Configurable TPID", 4.15.2F+,
#: platform dependent). 0x8100 is the IEEE 802.1Q default, 0x88a8 the IEEE 802.1ad S-tag TPID.
STAG_TPIDS = (0x8100, 0x88A8)


def _check_interface(name: str) -> None:
    if not _INTERFACE.match(name or ""):
        raise ValueError(f"interface name {name!r} is not an EOS switch port (e.g. Ethernet7, Ethernet1/1, "
                         "Port-Channel10)")


def render_config(access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
    """Render the merge candidate that makes each access port its own VLAN and trunks carry them.

    Args:
        access: access-port changes; VIDs 1..4094, names 1-32 chars of ``[A-Za-z0-9_.-]``; ``qinq`` ports
            become ``switchport mode dot1q-tunnel`` ports of their VLAN (802.1ad customer ports).
        trunks: trunk changes; each carries exactly its ``vids`` (a ``shared`` one also what it carries now:
            ``switchport trunk allowed vlan add``; the configuration session's diff is semantic, so a second merge
            is empty); ``stag_tpid`` 0x8100 (default, nothing rendered) or 0x88a8 (``switchport dot1q ethertype
            0x88a8``, only when a QinQ port exists); ``bring_up`` adds ``no shutdown``.

    Returns:
        EOS config text with 3-space indentation: ``vlan`` blocks (sorted by VID; trunk-only VIDs unnamed),
        access ``interface`` blocks, trunk blocks, ``end``. Same input → same text. A change with ``no_learning``
        gets ``no switchport mac address learning`` on its interface (EOS learns per interface; the access port and
        the trunk are the only members of a HARMLESS VLAN and the trunk carries only HARMLESS VLANs).

    Raises:
        ValueError: bad VID, VLAN name, interface name or TPID; one VID given two names; one interface
            changed twice.
    """
    vlans, _seen = collect_vlans(access, trunks, _check_interface)
    any_qinq = any(a.qinq for a in access)
    rows = []
    for t in trunks:
        if t.stag_tpid not in STAG_TPIDS:
            raise ValueError(f"{t.interface}: S-tag TPID {t.stag_tpid:#06x} is not one EOS can set "
                             f"({', '.join(f'{x:#06x}' for x in STAG_TPIDS)})")
        tpid = f"{t.stag_tpid:#06x}" if any_qinq and t.stag_tpid != 0x8100 else None
        rows.append((t.interface, format_vid_ranges(t.vids), tpid, "add " if t.shared else "", t.bring_up,
                     t.no_learning))
    return _ENV.get_template("harmless.j2").render(vlans=sorted(vlans.items()), access=list(access), trunks=rows)


def render_port_admin(interface: str, enabled: bool) -> str:
    """``interface X`` / ``shutdown`` (or ``no shutdown``) / ``end`` (pure). Raises ValueError for a bad name."""
    _check_interface(interface)
    return f"interface {interface}\n   {'no shutdown' if enabled else 'shutdown'}\n!\nend\n"
