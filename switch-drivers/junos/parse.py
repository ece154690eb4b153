"""Per-port 802.1Q state and VLANs from a Junos configuration (pure; ELS and non-ELS syntax).

Input is the configuration as curly text (``show configuration``, what NAPALM ``get_config`` returns) or as
``set`` commands (``show configuration | display set``); both become set paths (:mod:`.conf`).

A port is a layer-2 port when it has ``unit 0 family ethernet-switching``. Its mode is ``interface-mode`` (ELS)
or ``port-mode`` (non-ELS), default ``access``. VLAN members may be names, VIDs, ranges (``100-110``) or
``all``; non-ELS configs may also list ports under ``vlans NAME interface IF.0``. An access port without
members is in the default VLAN (VID 1). A trunk's native VLAN is ``native-vlan-id`` (ELS: on the interface;
non-ELS: under the family, a name or VID); without one the trunk has no untagged VLAN (``native_vid`` None).
``interface-range`` members, ``vlan-id-list`` VLANs and ``inactive:`` statements are handled by the port model
(:mod:`.model`), from which the port states here are derived. Not modelled: apply-groups, QinQ units.
"""
from __future__ import annotations

import re

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.junos.conf import Path, read_config
from harmless.switch_drivers.junos.model import model_from_paths

#: non-ELS EX platforms (original ethernet-switching syntax, ``port-mode``); others run ELS (``interface-mode``)
LEGACY_MODELS = re.compile(r"^EX(2200|3200|3300|4200|4500|4550|6200|8200)", re.I)


def config_paths(text: str) -> list[Path]:
    """Active set paths of a configuration given as curly text or as ``set`` commands (detected; see
    :func:`conf.parse_config`: ``inactive:``/``deactivate`` statements are left out; what cannot be read is left
    out too, :func:`conf.read_config`)."""
    return [p for p, off in read_config(text)[0] if not off]


def parse_vlans(text: str) -> dict[int, str]:
    """``{vid: name}`` for every VID of ``vlans NAME vlan-id VID`` / ``vlan-id-list`` / ``vlan-range`` (ELS's
    implicit ``default`` VLAN is VID 1). Derived from the port model (:mod:`.model`).

    What cannot be read is left out (:func:`conf.read_config`); raises nothing on bad text.
    """
    out = dict(model_from_paths(read_config(text)[0]).vlan_names)
    out.setdefault(1, "default")
    return out


def detect_syntax(text: str, model: str = "") -> str:
    """``"els"`` or ``"legacy"``: what the configuration uses, else what the model runs (ELS if unknown).

    Evidence order: an ``interface-mode`` statement → ELS; ``port-mode`` or ``ethernet-switching-options`` →
    legacy; else the model (:data:`LEGACY_MODELS`).
    """
    paths = config_paths(text)
    words = {w for p in paths for w in p}
    if "interface-mode" in words:
        return "els"
    if "port-mode" in words or any(p[0] == "ethernet-switching-options" for p in paths):
        return "legacy"
    return "legacy" if LEGACY_MODELS.match(model or "") else "els"


def parse_port_states(text: str) -> dict[str, PortVlanState]:
    """``{interface: PortVlanState}`` for every layer-2 (access or trunk) port of the configuration.

    Derived from the port model (:func:`.model.model_from_paths`), so the driver and ``harmless ports`` read a
    configuration the same way: an access port without members is in the default VLAN (VID 1), a trunk's
    ``members all`` is ``allowed_vids=None``, a trunk without ``native-vlan-id`` has ``native_vid=None``.

    What cannot be read is left out (:func:`conf.read_config`); raises nothing on bad text.
    """
    result = {}
    for p in model_from_paths(read_config(text)[0]).ports:
        if p.mode == "trunk":
            result[p.interface] = PortVlanState(
                name=p.interface, mode="trunk", native_vid=p.native_vid,
                allowed_vids=None if p.allowed_vids == "all" else p.allowed_vids, shutdown=p.shutdown)
        elif p.mode == "access":
            result[p.interface] = PortVlanState(name=p.interface, mode="access",
                                                access_vid=p.access_vid if p.access_vid is not None else 1,
                                                shutdown=p.shutdown)
    return result


def vlan_side_members(text: str) -> dict[str, list[str]]:
    """Non-ELS VLAN-side memberships: ``{interface: [VLAN names]}`` from ``vlans NAME interface IF.0``.

    What cannot be read is left out (:func:`conf.read_config`); raises nothing on bad text.
    """
    out: dict[str, list[str]] = {}
    for p in config_paths(text):
        if len(p) == 4 and p[0] == "vlans" and p[2] == "interface":
            out.setdefault(p[3].split(".")[0], []).append(p[1])
    return out
