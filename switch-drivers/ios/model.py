"""Cisco IOS / IOS-XE per-port model (:mod:`harmless.switch_drivers.portmodel`) from the running config (pure).

``parse_model(config_text, show)`` reads the config with :mod:`harmless.switch_drivers.ciscomodel` under IOS rules
and adds what the config text may not hold, from ``show`` outputs when given (ntc-templates):

* VTP mode: the ``vtp mode`` line (IOS prints it only in transparent/off mode), else ``show vtp status``
  ("VTP Operating Mode"), else ``server`` — the IOS default, in which VLANs 1-1005 live in vlan.dat and are *not*
  in the running config. A router (no switching config at all) has no VTP mode (None).
* spanning-tree mode: the ``spanning-tree mode`` line, else ``show spanning-tree summary`` ("Switch is in X mode").
* port-channel members: ``channel-group`` lines, plus ``show etherchannel summary``.

IOS defaults applied: a switch port without ``switchport mode`` is ``dynamic`` (DTP) in access VLAN 1; VLANs 1 and
1002-1005 always exist; on a router (no ``switchport``/``vlan``/``vtp``/``spanning-tree mode`` line, no SVI)
every port is ``routed``; a switch port holding an ``ip address`` and no switchport line is ``routed``; on a
platform whose ports are layer 3 by default (a Catalyst 6500 in native IOS: the config prints a bare ``switchport``
on its layer-2 ports) a port or port-channel without ``switchport`` is ``routed``.
"""
from __future__ import annotations

import re

from harmless.switch_drivers.ciscomodel import Dialect, build_model, global_lines
from harmless.switch_drivers.names import canonical_interface
from harmless.switch_drivers.portmodel import SwitchModel

__all__ = ["IOS", "is_router", "parse_model", "vtp_mode_of"]

#: IOS: no mode line = dynamic (DTP); VLAN 1 and the FDDI/Token Ring defaults 1002-1005 always exist
#: (Catalyst configuration guides, "Configuring VLANs": "Normal-range VLANs ... 1002-1005 are reserved").
#: A platform whose ports are layer 3 by default (Catalyst 6500/7600 native IOS) prints a bare ``switchport`` on its
#: layer-2 ports: then a port (or a port-channel) without one is routed (:func:`..ciscomodel.prints_bare_switchport`).
IOS = Dialect(lag_prefix="Port-channel", no_mode="dynamic", builtin_vlans=(1, 1002, 1003, 1004, 1005),
              lags_follow_default=True, bare_switchport_routed=True)
_SWITCHING = re.compile(r"^(\s+switchport\b|vtp |spanning-tree mode |vlan \d|interface Vlan\d|\s+channel-group )",
                        re.M | re.I)


def is_router(config_text: str) -> bool:
    """True when the config has no switching at all (an ISR/ASR router: every port routed)."""
    return not _SWITCHING.search(config_text)


def vtp_mode_of(show_vtp_status: str) -> str | None:
    """``server``/``client``/``transparent``/``off`` from ``show vtp status`` (ntc-templates), None if unreadable."""
    from ntc_templates.parse import parse_output

    try:
        rows = parse_output(platform="cisco_ios", command="show vtp status", data=show_vtp_status)
    except Exception:  # noqa: BLE001 - textfsm raises its own types on odd output
        rows = []
    mode = (rows[0].get("mode") or "").lower() if rows else ""
    if not mode:
        m = re.search(r"VTP Operating Mode\s*:\s*(\w+)", show_vtp_status, re.I)
        mode = m.group(1).lower() if m else ""
    return mode if mode in ("server", "client", "transparent", "off") else None


def _lag_members(text: str) -> dict[str, str]:
    from ntc_templates.parse import parse_output

    out: dict[str, str] = {}
    try:
        rows = parse_output(platform="cisco_ios", command="show etherchannel summary", data=text)
    except Exception:  # noqa: BLE001
        return out
    for r in rows:
        lag = canonical_interface("ios", r["bundle_name"])
        for m in r["member_interface"]:
            out[canonical_interface("ios", m)] = lag
    return out


def parse_model(config_text: str, show: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of an IOS device (see module docstring).

    Args:
        config_text: ``show running-config`` text (a saved file works the same).
        show: optional ``{command: output}``: ``show vtp status``, ``show spanning-tree summary``,
            ``show etherchannel summary``.
    """
    show = show or {}
    router = is_router(config_text)
    top = global_lines(config_text)
    vtp = next((m.group(1) for ln in top if (m := re.match(r"vtp mode (server|client|transparent|off)$", ln))), None)
    if vtp is None and show.get("show vtp status"):
        vtp = vtp_mode_of(show["show vtp status"])
    if vtp is None and not router:
        vtp = "server"
    stp = next((m.group(1) for ln in top if (m := re.match(r"spanning-tree mode (\S+)$", ln))), None)
    if stp is None and show.get("show spanning-tree summary"):
        m = re.search(r"Switch is in (\S+) mode", show["show spanning-tree summary"])
        stp = m.group(1) if m else None
    members = _lag_members(show["show etherchannel summary"]) if show.get("show etherchannel summary") else None
    return build_model(config_text, IOS, router=router, vtp_mode=vtp, stp_mode=stp, lag_members=members)
