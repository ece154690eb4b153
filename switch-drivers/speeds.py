"""Nominal port speeds from interface names and ``speed`` lines (pure), for comparing migrated ports with a trunk.

A port's speed is its configured ``speed`` when it sets one (IOS ``speed 100``, EOS ``speed forced 10000full`` /
``speed 10g``, Junos ``ether-options speed 1g``, ProCurve ``speed-duplex 100-full``), else the nominal speed of its
interface type where the name gives it: Cisco IOS ``FastEthernet`` 100 Mbit/s, ``GigabitEthernet`` 1 Gbit/s,
``TwoGigabitEthernet`` 2.5, ``FiveGigabitEthernet`` 5, ``TenGigabitEthernet`` 10, ``TwentyFiveGigE`` 25,
``FortyGigabitEthernet`` 40, ``HundredGigE`` 100 (Cisco IOS Interface and Hardware Component Configuration Guide,
"Interface types"); Junos ``fe-`` 100 Mbit/s, ``ge-`` 1 Gbit/s, ``xe-`` 10 Gbit/s (Junos OS Interfaces Fundamentals,
"Interface naming conventions"). EOS ``EthernetN`` and ProCurve port numbers name no speed: unknown (None) unless
configured. A LAG's speed is the sum of its members' (:func:`lag_speed_mbps`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["lag_speed_mbps", "port_speed_mbps", "format_mbps"]

#: Cisco IOS interface-type prefixes and their nominal speed (Mbit/s), longest first
_IOS_TYPES = (("HundredGigE", 100_000), ("FortyGigabitEthernet", 40_000), ("TwentyFiveGigE", 25_000),
              ("TenGigabitEthernet", 10_000), ("FiveGigabitEthernet", 5_000), ("TwoGigabitEthernet", 2_500),
              ("GigabitEthernet", 1_000), ("FastEthernet", 100))
_JUNOS_TYPES = (("fe-", 100), ("ge-", 1_000), ("xe-", 10_000))
_UNITS = {"": 1, "m": 1, "g": 1_000}


def _configured(lines: Iterable[str]) -> int | None:
    """The speed (Mbit/s) a ``speed``/``speed-duplex`` line sets, None for none or ``auto``."""
    for ln in lines:
        m = re.search(r"\bspeed(?:-duplex)?\s+(?:forced\s+|auto\s+)?(\d+(?:\.\d+)?)([mg]?)(?:full|half|-full|-half)?"
                      r"(?:\s|$)", ln.lower())
        if m:
            return int(float(m.group(1)) * _UNITS[m.group(2)])
    return None


def port_speed_mbps(driver: str, interface: str, lines: Iterable[str] = ()) -> int | None:
    """Speed of one port in Mbit/s: its configured speed (``lines``: the port's config lines), else its interface
    type's nominal speed, else None (unknown).

    Args:
        driver: inventory driver (``ios``, ``netmiko_cli``, ``eos``, ``junos``, ``procurve``).
        interface: the port's name as the device spells it.
        lines: the port's config lines (whitespace-normalised), e.g. :attr:`PortInfo.unparsed`.
    """
    speed = _configured(lines)
    if speed:
        return speed
    if driver in ("ios", "netmiko_cli"):
        return next((s for prefix, s in _IOS_TYPES if interface.lower().startswith(prefix.lower())), None)
    if driver == "junos":
        return next((s for prefix, s in _JUNOS_TYPES if interface.startswith(prefix)), None)
    return None


def lag_speed_mbps(member_speeds: Iterable[int | None]) -> int | None:
    """A LAG's speed: the sum of its members' (None when it has none or one is unknown)."""
    speeds = list(member_speeds)
    return sum(speeds) if speeds and all(speeds) else None  # type: ignore[arg-type]


def format_mbps(mbps: float) -> str:
    """``100`` → ``100 Mbit/s``, ``20000`` → ``20 Gbit/s``, ``2500`` → ``2.5 Gbit/s``."""
    if mbps >= 1000:
        return f"{mbps / 1000:g} Gbit/s"
    return f"{mbps:g} Mbit/s"
