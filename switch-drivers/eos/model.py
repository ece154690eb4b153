"""Arista EOS per-port model (:mod:`harmless.switch_drivers.portmodel`) from the running config (pure).

``parse_model(config_text, show)`` reads the config with :mod:`harmless.switch_drivers.ciscomodel` under EOS rules:
a switch port without ``switchport mode`` is an ``access`` port of VLAN 1, unless the config has ``switchport
default mode routed`` (then a port without a ``switchport`` line is ``routed``; EOS prints ``switchport`` on the
switched ones); ``Management1`` is the management port; VLAN 1 always exists; EOS has no VTP (``vtp_mode`` None).
The MLAG peer link comes from ``mlag configuration`` / ``peer-link Port-ChannelN`` (or ``show mlag``), port-channel
membership from ``channel-group`` lines (plus ``show port-channel summary``). Spanning-tree mode from the
``spanning-tree mode`` line, else ``mstp`` (the EOS default, EOS User Manual "Spanning Tree Protocol"). A port's
``l2-protocol forwarding profile P`` gives its ``l2pt``: the HARMLESS protocols (LLDP, STP, LACP) whose untagged
PDUs profile ``P`` of the ``l2-protocol`` block forwards (``lldp untagged forward`` or ``lldp forward``; EOS User
Manual, "Layer 2 Protocol Forwarding").
"""
from __future__ import annotations

import re
from dataclasses import replace

from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.ciscomodel import Dialect, block_children, build_model, global_lines
from harmless.switch_drivers.portmodel import SwitchModel

__all__ = ["EOS", "parse_model"]

EOS = Dialect(lag_prefix="Port-Channel", no_mode="access", builtin_vlans=(1,))


def _show_rows(command: str, text: str) -> list[dict]:
    from ntc_templates.parse import parse_output

    try:
        return parse_output(platform="arista_eos", command=command, data=text)
    except Exception:  # noqa: BLE001 - textfsm raises its own types on odd output
        return []


_PROFILE_LINE = re.compile(r"^l2-protocol forwarding profile (\S+)$")


def forwarding_profiles(config_text: str) -> dict[str, tuple[str, ...]]:
    """``{profile: HARMLESS protocols whose untagged PDUs it forwards}`` from the ``l2-protocol`` block (pure)."""
    out: dict[str, tuple[str, ...]] = {}
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    for top in parse.find_objects(r"^l2-protocol\s*$"):
        for prof in top.children:
            m = re.match(r"\s*forwarding profile (\S+)\s*$", prof.text)
            if not m:
                continue
            fwd = {w[0] for c in prof.children if (w := c.text.split()) and w[-1] == "forward"
                   and (len(w) == 2 or w[1] in ("untagged", "all"))}
            out[m.group(1)] = tuple(p for p in ("lldp", "stp", "lacp") if p in fwd)
    return out


def _with_profiles(model: SwitchModel, config_text: str) -> SwitchModel:
    """Ports with ``l2-protocol forwarding profile P``: ``l2pt`` from ``P``, the line out of ``unparsed``."""
    profiles = forwarding_profiles(config_text)
    ports = []
    for p in model.ports:
        names = [m.group(1) for u in p.unparsed if (m := _PROFILE_LINE.match(u))]
        if names:
            p = replace(p, l2pt=profiles.get(names[-1], ()),
                        unparsed=tuple(u for u in p.unparsed if not _PROFILE_LINE.match(u)))
        ports.append(p)
    return replace(model, ports=tuple(ports))


def parse_model(config_text: str, show: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of an EOS device (see module docstring).

    Args:
        config_text: ``show running-config`` text (a saved file works the same).
        show: optional ``{command: output}``: ``show mlag``, ``show port-channel summary``.
    """
    show = show or {}
    top = global_lines(config_text)
    default_routed = "switchport default mode routed" in top
    stp = next((m.group(1) for ln in top if (m := re.match(r"spanning-tree mode (\S+)$", ln))), "mstp")
    peer = next((m.group(1) for ln in block_children(config_text, r"^mlag configuration\s*$")
                 if (m := re.match(r"peer-link (\S+)$", ln))), None)
    if peer is None and show.get("show mlag"):
        rows = _show_rows("show mlag", show["show mlag"])
        peer = (rows[0].get("peer_link") or None) if rows else None
    members: dict[str, str] = {}
    if show.get("show port-channel summary"):
        for r in _show_rows("show port-channel summary", show["show port-channel summary"]):
            for m in r["member_interface"]:
                members["Ethernet" + m[2:]] = "Port-Channel" + r["bundle_name"][2:]
    model = build_model(config_text, EOS, default_routed=default_routed, vtp_mode=None, stp_mode=stp,
                        mlag_peer_link=peer, lag_members=members or None)
    return _with_profiles(model, config_text)
