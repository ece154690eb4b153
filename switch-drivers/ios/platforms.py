"""What Catalyst platforms can tunnel (``l2protocol-tunnel``), by the model name ``show version`` gives (pure).

Each row cites the Cisco document it comes from; a model that matches no row is unknown (``None``): HARMLESS then
renders what the inventory asks and lets the device refuse what it cannot do (the commit fails and the original
config is back).
"""
from __future__ import annotations

import re

from harmless.switch_drivers.l2pt import TUNNEL_MAC

__all__ = ["L2PT_PLATFORMS", "TUNNEL_MAC", "l2pt_support"]

_P2MP = ("cdp", "stp", "vtp")
_P2P = ("lacp", "pagp", "udld")
#: ``(model regex, protocols, minimum IOS release for lldp or None, source)``; the first matching row wins
L2PT_PLATFORMS: tuple[tuple[str, tuple[str, ...], tuple[int, int, int] | None, str], ...] = (
    (r"^ME-C3750", ("lldp", *_P2MP, *_P2P), (12, 2, 58),
     "Catalyst 3750 Metro Switch Command Reference, l2protocol-tunnel: CDP, LLDP (12.2(58)SE and later), STP, VTP; "
     "point-to-point PAgP, LACP, UDLD"),
    (r"^WS-C2960XR", (*_P2MP, *_P2P), None,
     "Catalyst 2960-XR Software Configuration Guide, Configuring IEEE 802.1Q and Layer 2 Protocol Tunneling"),
    (r"^WS-C3[57][56]0", (*_P2MP, *_P2P), None,
     "Catalyst 3750-X and 3560-X Software Configuration Guide, Configuring Layer 2 Protocol Tunneling: CDP, STP, "
     "VTP, point-to-point PAgP, LACP, UDLD; \"does not support Layer 2 protocol tunneling for LLDP\""),
    (r"^ME-34", (*_P2MP, *_P2P), None,
     "Cisco ME 3400 Ethernet Access Switch Command Reference, l2protocol-tunnel (metro access images)"),
    (r"^WS-C4[59]", _P2MP, None,
     "Catalyst 4500 Series Software Configuration Guide 12.2(31)SG, Configuring 802.1Q and Layer 2 Protocol "
     "Tunneling: CDP, STP, VTP"),
    (r"^C9[3-6]", (*_P2MP, *_P2P), None,
     "Catalyst 9500/9600 Layer 2 Configuration Guide, IOS XE Amsterdam 17.3.x, Configuring Layer 2 Protocol "
     "Tunneling"),
)


def _release(os_version: str) -> tuple[int, int, int] | None:
    """``(12, 2, 58)`` from ``... Version 12.2(58)SE2, ...``; None when the text has no IOS release."""
    m = re.search(r"Version (\d+)\.(\d+)\((\d+)\)", os_version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def l2pt_support(model: str, os_version: str = "") -> tuple[tuple[str, ...] | None, str]:
    """``(protocols the platform tunnels, source)`` for a Catalyst ``model`` (``show version``), or ``(None, '')``
    when no row of :data:`L2PT_PLATFORMS` knows it. LLDP only from the row's minimum release (a release that cannot
    be read counts as new enough).
    """
    for rx, protos, lldp_from, source in L2PT_PLATFORMS:
        if re.match(rx, model or ""):
            rel = _release(os_version)
            if lldp_from and rel is not None and rel < lldp_from:
                protos = tuple(p for p in protos if p != "lldp")
            return protos, source
    return None, ""
