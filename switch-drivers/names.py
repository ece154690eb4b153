"""Interface names per switch OS: one canonical spelling, and the default OpenFlow port number of a name (pure).

Users write ``Gi0/1``, ``gi0/1`` or ``GigabitEthernet0/1``; the device prints one of them. Every comparison of
interface names in HARMLESS (duplicates, trunk vs access port, ``trunk:`` references, inventory vs the device's
interface list) goes through :func:`canonical_interface`, which returns the full name as the OS prints it in its
running config:

===============  ===========================================================================================
driver           canonical form (examples: what users write → canonical)
===============  ===========================================================================================
``ios``,         ``Gi0/1``, ``gi 0/1``, ``Gig0/1`` → ``GigabitEthernet0/1``; ``Fa0/7`` → ``FastEthernet0/7``;
``netmiko_cli``  ``Te1/1/1`` → ``TenGigabitEthernet1/1/1``; ``Po1``, ``port-channel1`` → ``Port-channel1``.
                 A type may be abbreviated to any unique prefix (as IOS's own parser accepts).
``eos``          ``Et1``, ``eth1``, ``e1`` → ``Ethernet1``; ``Po10`` → ``Port-Channel10``; ``Ma1`` → ``Management1``.
``junos``        lower case, unit 0 is the port itself: ``GE-0/0/1.0`` → ``ge-0/0/1``; other units are kept.
``procurve``     ``a1`` → ``A1``; ``1/a1`` → ``1/A1``; ``trk1`` → ``Trk1``; ``ethernet A1`` → ``A1``.
===============  ===========================================================================================

A name that does not follow the OS's grammar is returned stripped but otherwise unchanged (it then only equals
itself); :func:`interface_problem` says why such a name cannot be an interface of that OS.

OpenFlow port numbers (:func:`default_ofport`, documented in ``docs/ofport-numbering.md``): br-of port N *is* legacy
port N (HARMLESS paper, Sec. II, data-plane transparency), so the number comes from the name. Stack members, line
cards / FPCs / modules and LAGs get their own blocks, so that ``Gi1/0/1`` and ``Gi2/0/1`` or ``Port-channel1`` and
``Gi0/1`` differ, while the plain single-switch names keep the last number (``FastEthernet0/7`` → 7,
``Ethernet7`` → 7, ``ge-0/0/7`` → 7, ``A7`` → 7, ``7`` → 7):

* ``block(k)`` = 0 for stack member / slot 0 or 1 (the first switch), else ``1000 * k`` (IOS, EOS, ProCurve are
  1-based); Junos FPC ``f`` → ``1000 * f`` (0-based: FPC 0 is the first Virtual Chassis member).
* IOS ``<type><a>/<n>`` → ``block(a) + n``; ``<type><m>/<s>/<n>`` → ``block(m) + 100 * s + n`` (module ``s`` of
  member ``m``: ``Gi1/0/7`` → 7, ``Te1/1/3`` → 103, ``Gi2/0/7`` → 2007).
* EOS ``Ethernet<n>`` → ``n``; ``Ethernet<a>/<n>`` → ``block(a) + n``; ``Ethernet<s>/<p>/<l>`` (line card ``s``,
  port ``p``, lane ``l``) → ``block(s) + 10 * p + l``.
* Junos ``<type>-<f>/<p>/<n>`` → ``1000 * f + 100 * p + n`` (``ge-0/0/7`` → 7, ``ge-0/1/2`` → 102, ``ge-1/0/7`` →
  1007).
* ProCurve ``<n>`` → ``n``; ``<L><n>`` (module letter) → ``100 * (L - 'A') + n``; ``<m>/<n>``, ``<m>/<L><n>`` add
  ``block(m)`` (``A7`` → 7, ``B7`` → 107, ``2/A7`` → 2007, ``2/7`` → 2007).
* LAGs (``Port-channel<n>``, ``Port-Channel<n>``, ``ae<n>``, ``Trk<n>``) → ``60000 + n``.

Results outside 1..65279 (Open vSwitch's ``ofport_request`` range; OpenFlow 1.3 reserves 0 and 0xffffff00 and up)
are refused with ``ValueError``: Junos ``ge-0/0/0`` and IOS ``Gi0/0`` give port 0, which OpenFlow reserves; such
ports need an explicit ``ofport`` in the inventory. Two names that map to one number (``Fa0/7`` and ``Gi0/7``) are
refused by the inventory validation with the same fix.
"""
from __future__ import annotations

import re

#: Open vSwitch ``Interface.ofport_request`` accepts 1..65279 (ofproto: OFPP_MAX is 0xff00 for OpenFlow 1.0 ports)
OFPORT_MIN, OFPORT_MAX = 1, 65279
#: first OpenFlow port number of LAGs: ``Port-channel<n>`` / ``ae<n>`` / ``Trk<n>`` → ``LAG_BASE + n``
LAG_BASE = 60000
#: width of the block of one stack member / line card / FPC
MEMBER_BLOCK = 1000

#: IOS (and netmiko_cli, which speaks IOS): full interface type as the running config prints it → the
#: abbreviations IOS itself prints (``show interfaces status``) or users commonly type. Any unique prefix of a
#: full type is accepted too.
IOS_TYPES: dict[str, tuple[str, ...]] = {
    "FastEthernet": ("Fa",),
    "GigabitEthernet": ("Gi", "Gig"),
    "TwoGigabitEthernet": ("Tw",),
    "FiveGigabitEthernet": ("Fi",),
    "TenGigabitEthernet": ("Te", "Ten"),
    "TwentyFiveGigE": ("Twe",),
    "FortyGigabitEthernet": ("Fo",),
    "HundredGigE": ("Hu",),
    "AppGigabitEthernet": ("Ap",),
    "Ethernet": ("Et", "Eth"),
    "Port-channel": ("Po",),
    "Vlan": ("Vl",),
    "Loopback": ("Lo",),
    "Tunnel": ("Tu",),
    "Serial": ("Se",),
}

#: Arista EOS: full type → abbreviations (EOS prints ``Et1``, ``Po10``, ``Ma1``).
EOS_TYPES: dict[str, tuple[str, ...]] = {
    "Ethernet": ("Et", "Eth"),
    "Port-Channel": ("Po",),
    "Management": ("Ma", "Mgmt"),
    "Vlan": ("Vl",),
    "Loopback": ("Lo",),
    "Tunnel": ("Tu",),
    "Vxlan": ("Vx",),
}

#: types that are LAGs, per driver (canonical spelling)
LAG_TYPES = {"ios": ("Port-channel",), "netmiko_cli": ("Port-channel",), "eos": ("Port-Channel",),
             "junos": ("ae",), "procurve": ("Trk",)}
#: logical (not physical switch port) types, per driver: never an access port or a trunk cable
LOGICAL_TYPES = {"ios": ("Vlan", "Loopback", "Tunnel"), "netmiko_cli": ("Vlan", "Loopback", "Tunnel"),
                 "eos": ("Vlan", "Loopback", "Tunnel", "Vxlan", "Management"),
                 "junos": ("irb", "vlan", "lo0", "me0", "em0", "em1", "fxp0", "vme")}
#: Junos physical interface types with ``<type>-<fpc>/<pic>/<port>`` names
JUNOS_PORT_TYPES = ("fe", "ge", "xe", "et", "mge", "xle", "fte", "sxe")

_NUM_TAIL = re.compile(r"^(\d+(?:/\d+)*)(?:\.(\d+))?(?::(\d+))?$")
_CISCO = re.compile(r"^([A-Za-z](?:[A-Za-z0-9-]*?[A-Za-z-])?)\s*(\d[\d/.:\s]*)$")
_JUNOS_PORT = re.compile(r"^([a-z]+)-(\d+)/(\d+)/(\d+)(?::(\d+))?(?:\.(\d+))?$")
_JUNOS_AE = re.compile(r"^ae(\d+)(?:\.(\d+))?$")
_PROCURVE = re.compile(r"^(?:(\d+)/)?([A-Z])?(\d+)$")
_PROCURVE_TRK = re.compile(r"^TRK(\d+)$")


def _type_tables(driver: str) -> dict[str, tuple[str, ...]]:
    return EOS_TYPES if driver == "eos" else IOS_TYPES


def _full_type(driver: str, typ: str) -> str | None:
    """The full type for a (possibly abbreviated) type, case-insensitive; None if unknown or ambiguous."""
    table = _type_tables(driver)
    low = typ.lower()
    for full, aliases in table.items():
        if low == full.lower() or low in (a.lower() for a in aliases):
            return full
    hits = [full for full in table if full.lower().startswith(low)]
    return hits[0] if len(hits) == 1 else None


def _cisco_numbers(tail: str) -> str:
    """``' 0/ 01'`` → ``'0/1'``; keeps ``.sub`` and ``:lane`` suffixes, drops leading zeros and blanks."""
    tail = re.sub(r"\s+", "", tail)
    m = _NUM_TAIL.match(tail)
    if not m:
        return tail
    out = "/".join(str(int(x)) for x in m.group(1).split("/"))
    if m.group(2) is not None:
        out += f".{int(m.group(2))}"
    if m.group(3) is not None:
        out += f":{int(m.group(3))}"
    return out


def canonical_interface(driver: str, name: str) -> str:
    """The full interface name as the OS prints it in its running config (pure; see the module docstring).

    Args:
        driver: inventory driver name (``ios``, ``netmiko_cli``, ``eos``, ``junos``, ``procurve``); an unknown
            driver gets IOS rules.
        name: an interface name as a user or a device wrote it.

    Returns:
        The canonical name (``GigabitEthernet0/1``, ``Port-Channel10``, ``ge-0/0/1``, ``1/A1``, ``Trk1``), or the
        stripped input when it does not follow the OS's grammar.
    """
    s = str(name).strip()
    if driver == "junos":
        s = re.sub(r"\s+", "", s).lower()
        return s[:-2] if s.endswith(".0") else s
    if driver == "procurve":
        s = re.sub(r"^ethernet\s+", "", s, flags=re.I)
        u = re.sub(r"\s+", "", s).upper()
        if m := _PROCURVE_TRK.match(u):
            return f"Trk{int(m.group(1))}"
        if m := _PROCURVE.match(u):
            member, letter, n = m.groups()
            return (f"{int(member)}/" if member else "") + (letter or "") + str(int(n))
        return s
    m = _CISCO.match(s)
    if not m:
        return s
    full = _full_type(driver, m.group(1).rstrip("-"))
    if full is None:
        return s
    return full + _cisco_numbers(m.group(2))


def same_interface(driver: str, a: str, b: str) -> bool:
    """True if ``a`` and ``b`` name the same interface on an OS of this driver (``Gi0/1`` vs ``gigabitethernet0/1``)."""
    return canonical_interface(driver, a) == canonical_interface(driver, b)


def _block(k: int) -> int:
    """First port number of stack member / slot ``k`` (1-based): 0 for the first (0 or 1), else 1000*k."""
    return 0 if k <= 1 else MEMBER_BLOCK * k


def _checked(n: int, name: str) -> int:
    if not OFPORT_MIN <= n <= OFPORT_MAX:
        if n == 0:
            raise ValueError(f"{name} would be OpenFlow port 0, which OpenFlow reserves")
        raise ValueError(f"{name} would be OpenFlow port {n}, outside {OFPORT_MIN}-{OFPORT_MAX}")
    return n


def default_ofport(driver: str, name: str) -> int:
    """The OpenFlow port number of an interface under HARMLESS's numbering scheme (pure; module docstring).

    Args:
        driver: inventory driver name.
        name: interface name (any spelling :func:`canonical_interface` accepts).

    Returns:
        The port number, 1..65279.

    Raises:
        ValueError: no number can be derived (no number in the name, a subinterface/unit, a channelised port, a
            number that is 0 or does not fit the scheme); the message says why, for an ``InputError``.
    """
    c = canonical_interface(driver, name)
    if driver == "junos":
        return _junos_ofport(c)
    if driver == "procurve":
        return _procurve_ofport(c)
    return _cisco_ofport(driver, c)


def _junos_ofport(c: str) -> int:
    """:func:`default_ofport` of a canonical Junos name: ``aeN`` → LAG block, ``ge-F/P/N`` → member block of FPC F."""
    if m := _JUNOS_AE.match(c):
        if m.group(2):
            raise ValueError(f"{c} is a logical unit, not a port")
        return _checked(LAG_BASE + int(m.group(1)), c)
    m = _JUNOS_PORT.match(c)
    if not m:
        raise ValueError(f"{c} is not a Junos port name like ge-0/0/7")
    _typ, fpc, pic, port, chan, unit = m.groups()
    if unit:
        raise ValueError(f"{c} is a logical unit, not a port")
    if chan:
        raise ValueError(f"{c} is a channel of a channelised port; the numbering scheme has no room for it")
    fpc, pic, port = int(fpc), int(pic), int(port)
    if pic > 9 or port > 99:
        raise ValueError(f"{c} has a PIC above 9 or a port above 99; the numbering scheme has no room for it")
    return _checked(MEMBER_BLOCK * fpc + 100 * pic + port, c)


def _procurve_ofport(c: str) -> int:
    """:func:`default_ofport` of a canonical ProCurve name: ``TrkN`` → LAG block, ``[member/][module]N``."""
    if m := re.match(r"^Trk(\d+)$", c):
        return _checked(LAG_BASE + int(m.group(1)), c)
    m = _PROCURVE.match(c)
    if not m:
        raise ValueError(f"{c} is not a ProCurve port name like 7, A7 or 1/A7")
    member, letter, n = m.groups()
    n = int(n)
    if letter and n > 99:
        raise ValueError(f"{c} has a port above 99 on a module; the numbering scheme has no room for it")
    base = _block(int(member)) if member else 0
    return _checked(base + (100 * (ord(letter) - ord("A")) if letter else 0) + n, c)


def _cisco_ofport(driver: str, c: str) -> int:
    """:func:`default_ofport` of a canonical IOS/EOS name: ``<type><n>``, ``<type><a>/<n>``, three numbers (stack
    member/module/port on IOS, slot/port/lane on EOS), LAGs in the LAG block."""
    m = _CISCO.match(c)
    if not m:
        raise ValueError(f"{c} has no port number")
    typ, tail = m.group(1), m.group(2)
    if "." in tail:
        raise ValueError(f"{c} is a subinterface, not a port")
    if ":" in tail:
        raise ValueError(f"{c} is a channel of a channelised port; the numbering scheme has no room for it")
    nums = [int(x) for x in tail.split("/")]
    if typ in LAG_TYPES.get(driver, LAG_TYPES["ios"]) or typ.lower() == "port-channel":
        if len(nums) != 1:
            raise ValueError(f"{c} is not a LAG name like Port-channel1")
        return _checked(LAG_BASE + nums[0], c)
    if len(nums) == 1:
        return _checked(nums[0], c)
    if len(nums) == 2:
        a, n = nums
        if n > 999:
            raise ValueError(f"{c} has a port above 999; the numbering scheme has no room for it")
        return _checked(_block(a) + n, c)
    if len(nums) == 3:
        a, b, n = nums
        if driver == "eos":             # Ethernet<slot>/<port>/<lane>
            if n > 9 or b > 99:
                raise ValueError(f"{c} has a port above 99 or a lane above 9; the numbering scheme has no room")
            return _checked(_block(a) + 10 * b + n, c)
        if b > 9 or n > 99:             # <type><member>/<module>/<port>
            raise ValueError(f"{c} has a module above 9 or a port above 99; the numbering scheme has no room")
        return _checked(_block(a) + 100 * b + n, c)
    raise ValueError(f"{c} has more than three numbers; the numbering scheme has no room for it")


def is_lag(driver: str, name: str) -> bool:
    """True if the interface is a link aggregation group (``Port-channel1``, ``Port-Channel1``, ``ae0``, ``Trk1``)."""
    c = canonical_interface(driver, name)
    if driver == "junos":
        return bool(_JUNOS_AE.match(c))
    if driver == "procurve":
        return c.startswith("Trk")
    m = _CISCO.match(c)
    return bool(m) and m.group(1) in LAG_TYPES.get(driver, LAG_TYPES["ios"])


def interface_problem(driver: str, name: str) -> str | None:
    """Why ``name`` cannot be a switch port (access port or trunk) of an OS of this driver; None if it can.

    Catches names of another OS (``ge-0/0/1`` on IOS, ``GigabitEthernet0/1`` on Junos), logical interfaces (``Vlan10``,
    ``Loopback0``, ``irb``, ``me0``) and names without a port number. A name it accepts may still be missing on the
    device (the planner checks that against the device's own list).
    """
    s = str(name).strip()
    if not s:
        return "is empty"
    c = canonical_interface(driver, s)
    if driver == "junos":
        port = _JUNOS_PORT.match(c)
        if (port and port.group(6)) or ((ae := _JUNOS_AE.match(c)) and ae.group(2)):
            return f"{s!r} is a logical unit, not a switch port (unit 0 is the port itself)"
        if _JUNOS_AE.match(c) or (port and port.group(1) in JUNOS_PORT_TYPES):
            return None
        if c.split(".")[0] in LOGICAL_TYPES["junos"] or c.split(".")[0] in ("irb", "vlan"):
            return f"{s!r} is a logical or management interface, not a switch port"
        return f"{s!r} is not a Junos port name (ge-0/0/7, xe-1/0/3, ae0)"
    if driver == "procurve":
        if _PROCURVE.match(c) or c.startswith("Trk"):
            return None
        return f"{s!r} is not a ProCurve port name (7, A7, 1/A7, Trk1)"
    m = _CISCO.match(c)
    os_name = "EOS" if driver == "eos" else "IOS"
    if not m:
        return f"{s!r} is not an {os_name} interface name (a type and a port number, e.g. " \
               f"{'Ethernet7' if driver == 'eos' else 'GigabitEthernet0/7'})"
    full = _full_type(driver, m.group(1))
    if full is None:
        low = c.lower()
        if (len(m.group(1)) == 1 or _JUNOS_PORT.match(low) or _JUNOS_AE.match(low)
                or _PROCURVE_TRK.match(c.upper())):
            return f"{s!r} is not an {os_name} interface name (unknown or ambiguous type {m.group(1)!r}; " \
                   f"e.g. {'Ethernet7' if driver == 'eos' else 'GigabitEthernet0/7'})"
        return None                     # a type this table does not know: the device's interface list decides
    if full in LOGICAL_TYPES.get(driver, LOGICAL_TYPES["ios"]):
        return f"{s!r} is a logical or management interface, not a switch port"
    if "." in m.group(2):
        return f"{s!r} is a subinterface, not a switch port"
    return None
