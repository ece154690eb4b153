"""Legacy switch drivers, one sub-package per switch OS (DESIGN.md §2), all behind :mod:`.base`.

``DRIVERS`` maps the inventory's ``driver`` value to ``"module:Class"``; :func:`get_driver` imports lazily.
"""
from __future__ import annotations

import importlib

DRIVERS: dict[str, str] = {
    "ios": "harmless.switch_drivers.ios.driver:IosDriver",
    "eos": "harmless.switch_drivers.eos.driver:EosDriver",
    "junos": "harmless.switch_drivers.junos.driver:JunosDriver",
    "procurve": "harmless.switch_drivers.procurve.driver:ProcurveDriver",
    "netmiko_cli": "harmless.switch_drivers.netmiko_cli.driver:NetmikoCliDriver",
}

#: drivers whose render sets a trunk's allowed VLANs exactly (IOS/EOS ``switchport trunk allowed vlan``, Junos
#: ``delete`` then ``set ... vlan members``), so that ONE commit can take HARMLESS's VLANs off one trunk and put them on
#: another: what an active/standby pair needs (docs/high-availability.md). ProCurve's VLAN-centric render only adds
#: ``tagged`` ports, so it could not take them off the old trunk.
EXACT_TRUNK_VLANS = frozenset({"ios", "eos", "junos"})


def get_driver(name: str):
    """Return the driver class for inventory driver ``name``. Raises KeyError for unknown names."""
    mod, _, cls = DRIVERS[name].partition(":")
    return getattr(importlib.import_module(mod), cls)
