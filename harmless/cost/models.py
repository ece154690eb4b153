"""CAPEX models of Csikor et al., "HARMLESS: Cost-Effective Transitioning to SDN for Small
Enterprises", IFIP Networking 2018 (``seeds/002_981afc430398dff2.txt``).

Pure functions only: a port count and a :class:`~harmless.cost.catalog.Catalog` in, money out.
All amounts are in the catalog's currency (USD for the default catalog); ``x`` is always the
number of access ports (an integer >= 1).

Each deployment option is computed as a list of :class:`LineItem` (what to buy, how many, at
which catalog price), so that reports can show the bill of materials and the sensitivity
analysis can see which price each euro/dollar comes from. The closed-form functions
(:func:`capex_sw_1g`, :func:`capex_hl_10g`, ...) are the paper's equations; tests check that
the line items add up to exactly them.

Sec. III (single x-port SDN switch, Fig. 3a/3b)::

    C_HW^1G  = $2700 ceil(x/48)                 C_HW^10G = $11200 ceil(x/48)
    C_SW^1G  = $1400 ceil(x/16) + $160 (ceil(x/4) - ceil(x/16)) + $400 (ceil(x/16) - #extraCPU_SW^1G)
    C_SW^10G = $1400 ceil(x/12) + $480 ceil(x/4) + $400 (ceil(x/12) - #extraCPU_SW^10G)
    C_HL^1G  = $1400 ceil(x/144) + $480 ceil(x/48) + $400 (ceil(x/144) - #extraCPU_HL^1G)
    C_HL^10G = $1400 ceil(x/72) + $500 ceil(x/24) + $400 (ceil(x/72) - #extraCPU_HL^10G)
    #extraCPU_SW^1G  = 1 if 0 < x mod 16  < 13 else 0
    #extraCPU_SW^10G = 1 if 0 < x mod 12  < 9  else 0
    #extraCPU_HL^1G  = 1 if 0 < x mod 144 < 97 else 0
    #extraCPU_HL^10G = 1 if 0 < x mod 72  < 49 else 0

Reading of the paper (and where it is ambiguous):

* The paper's ``#extraCPU`` is 1 when the *last* server does **not** need a second CPU (its ports
  fit on the first two PCIe slots, which hang off CPU 1); the number of second CPUs bought is
  therefore ``servers - #extraCPU``. A full last server (``x mod n == 0``) needs one.
* Software switch at 1G: the 4 built-in 1G ports count as one "4-port group" per server, so the
  i350 NICs bought are ``ceil(x/4) - ceil(x/16)``. At 10G no built-in port is usable, so every
  4-port group is an X710 (``ceil(x/4)``).
* HARMLESS: ``access_ports_per_trunk`` (k, paper: 12) generalises the constants: at 1G one X710
  (4x10G trunks) serves 4k = 48 access ports, a server 3 NICs = 12k = 144 ports, one CPU
  2 NICs = 8k = 96 ports; at 10G one XL710 (2x40G trunks) serves 2k = 24, a server 6k = 72,
  one CPU 4k = 48. With k = 12 the formulas are exactly the paper's.
* Legacy switches (48-port, ``ceil(x/48)`` of them) are "already on stock" in the paper
  (Sec. III.B, zero CAPEX); :class:`Owned` can price them instead ("add another couple of hundred
  USD per switch"). With k < 12 a 48-port legacy switch needs more trunks than its 4 uplinks;
  the model still counts ``ceil(x/48)`` legacy switches (it underestimates them).
* "What you already own" (Sec. III.B, Sec. IV.B.3): spare servers and legacy switches count as
  zero CAPEX. A spare server saves ``server_usd`` (chassis with its first CPU) per server the
  option needs; NICs and second CPUs are still bought.

Sec. IV.B.3 scenarios (Fig. 5c CLOS data centre, Fig. 5f access-gateway tree) are documented on
:func:`clos_items` and :func:`gateway_items`; the paper describes them in prose only, so the
choices made are listed there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from harmless.cost.catalog import Catalog
from harmless.errors import InputError

Speed = Literal["1G", "10G"]
Option = Literal["hardware", "software", "harmless"]
SPEEDS: tuple[str, ...] = ("1G", "10G")
OPTIONS: tuple[str, ...] = ("hardware", "software", "harmless")
SCENARIOS: tuple[str, ...] = ("switch", "clos", "gateway")

#: Sec. III.A: ports of the 48-port OpenFlow / legacy switch form factor.
SWITCH_PORTS = 48
#: Sec. IV.B.3: a two-tier CLOS with 48-port spines has at most 48 leaves of 48 ports.
CLOS_MAX_PORTS = 48 * 48
#: Sec. IV.B.3 (software CLOS): one 12x10G spine server, 12 leaves of 12x1G.
CLOS_SW_MAX_PORTS = 144
#: Sec. IV.B.3 (Fig. 5f): a 32x40G core takes 8 aggregation switches with 4x40G uplinks each,
#: each aggregation switch takes 12 leaves with 4x10G uplinks each: 8 * 12 * 48 ports.
GATEWAY_MAX_PORTS = 8 * 12 * 48


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers, exact (no floating point)."""
    return -(-a // b)


@dataclass(frozen=True)
class LineItem:
    """One line of a bill of materials.

    Attributes:
        item: what is bought (human readable).
        qty: how many pieces (negative for items already owned and subtracted).
        price_key: the catalog price used (a field of :class:`~harmless.cost.catalog.Prices`).
        unit: unit price in the catalog currency.
    """

    item: str
    qty: int
    price_key: str
    unit: float

    @property
    def total(self) -> float:
        """``qty * unit`` in the catalog currency."""
        return self.qty * self.unit


@dataclass(frozen=True)
class Owned:
    """Equipment the operator already owns (Sec. III.B: it counts as zero CAPEX).

    Attributes:
        spare_servers: servers on stock, usable for the software switch or HARMLESS servers.
        legacy_switches: legacy 802.1Q switches on stock; ``None`` means "as many as needed"
            (the paper's assumption for HARMLESS); ``0`` prices every legacy switch.
    """

    spare_servers: int = 0
    legacy_switches: int | None = None


PAPER_OWNED = Owned()


def total(items: list[LineItem] | None) -> float | None:
    """Sum of a bill of materials in the catalog currency (``None`` if the option is not available)."""
    if items is None:
        return None
    return float(sum(i.total for i in items))


def _check_ports(x: int) -> None:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise InputError("ports", f"must be a whole number >= 1, got {x!r}", "give the number of access ports, e.g. 48")


def _check_speed(speed: str) -> None:
    if speed not in SPEEDS:
        raise InputError("speed", f"unknown access speed {speed!r}", "use 1G or 10G")


def _items(*rows: tuple[str, int, str, Catalog]) -> list[LineItem]:
    return [LineItem(item, qty, key, float(getattr(cat.prices, key))) for item, qty, key, cat in rows if qty != 0]


# --------------------------------------------------------------------------------------------
# Sec. III.A/B: the #extraCPU indicators
# --------------------------------------------------------------------------------------------

def extra_cpu_sw_1g(x: int) -> int:
    """``#extraCPU_SW^1G`` (Sec. III.A): 1 if ``0 < x mod 16 < 13`` else 0.

    1 means the last software-switch server holds at most 12 1G ports (built-in + 2 i350 NICs on
    CPU 1's slots) and needs no second CPU.
    """
    return 1 if 0 < x % 16 < 13 else 0


def extra_cpu_sw_10g(x: int) -> int:
    """``#extraCPU_SW^10G`` (Sec. III.A): 1 if ``0 < x mod 12 < 9`` else 0 (last server <= 8 10G ports)."""
    return 1 if 0 < x % 12 < 9 else 0


def extra_cpu_hl_1g(x: int, k: int = 12) -> int:
    """``#extraCPU_HL^1G`` (Sec. III.B): 1 if ``0 < x mod 144 < 97`` else 0.

    Generalised to k access ports per trunk: ``0 < x mod 12k < 8k + 1`` (k = 12 gives 144 / 97):
    the last HARMLESS server needs no second CPU when its access ports fit on 2 X710 NICs.
    """
    return 1 if 0 < x % (12 * k) < 8 * k + 1 else 0


def extra_cpu_hl_10g(x: int, k: int = 12) -> int:
    """``#extraCPU_HL^10G`` (Sec. III.B): 1 if ``0 < x mod 72 < 49`` else 0.

    Generalised: ``0 < x mod 6k < 4k + 1`` (k = 12 gives 72 / 49): 2 XL710 NICs on CPU 1.
    """
    return 1 if 0 < x % (6 * k) < 4 * k + 1 else 0


def extra_cpu_sw_40g(p: int) -> int:
    """Indicator for a software switch with p 40G ports (Sec. III.A prose, no equation in the paper).

    A server takes 3 XL710 (6x40G), 4 ports on CPU 1: 1 if ``0 < p mod 6 < 5`` else 0. Used for
    the software core of the Fig. 5f tree.
    """
    return 1 if 0 < p % 6 < 5 else 0


# --------------------------------------------------------------------------------------------
# Sec. III.A/B: closed forms (Fig. 3a/3b)
# --------------------------------------------------------------------------------------------

def capex_hw_1g(x: int, cat: Catalog) -> float:
    """Sec. III.A: ``C_HW^1G = $2700 ceil(x/48)``, USD (48x1G+4x10G OpenFlow switches)."""
    return cat.prices.of_switch_48x1g_usd * ceil_div(x, 48)


def capex_hw_10g(x: int, cat: Catalog) -> float:
    """Sec. III.A: ``C_HW^10G = $11200 ceil(x/48)``, USD (48x10G+4x40G OpenFlow switches)."""
    return cat.prices.of_switch_48x10g_usd * ceil_div(x, 48)


def capex_sw_1g(x: int, cat: Catalog) -> float:
    """Sec. III.A: ``C_SW^1G = $1400 ceil(x/16) + $160 (ceil(x/4) - ceil(x/16)) + $400 (ceil(x/16) - #extraCPU_SW^1G)``, USD."""
    p, s = cat.prices, ceil_div(x, 16)
    return p.server_usd * s + p.nic_4x1g_usd * (ceil_div(x, 4) - s) + p.cpu_usd * (s - extra_cpu_sw_1g(x))


def capex_sw_10g(x: int, cat: Catalog) -> float:
    """Sec. III.A: ``C_SW^10G = $1400 ceil(x/12) + $480 ceil(x/4) + $400 (ceil(x/12) - #extraCPU_SW^10G)``, USD."""
    p, s = cat.prices, ceil_div(x, 12)
    return p.server_usd * s + p.nic_4x10g_usd * ceil_div(x, 4) + p.cpu_usd * (s - extra_cpu_sw_10g(x))


def capex_hl_1g(x: int, cat: Catalog) -> float:
    """Sec. III.B: ``C_HL^1G = $1400 ceil(x/144) + $480 ceil(x/48) + $400 (ceil(x/144) - #extraCPU_HL^1G)``, USD.

    Legacy switches on stock (zero CAPEX). k = ``cat.harmless.access_ports_per_trunk`` replaces
    144 = 12k and 48 = 4k.
    """
    p, k = cat.prices, cat.harmless.access_ports_per_trunk
    s = ceil_div(x, 12 * k)
    return p.server_usd * s + p.nic_4x10g_usd * ceil_div(x, 4 * k) + p.cpu_usd * (s - extra_cpu_hl_1g(x, k))


def capex_hl_10g(x: int, cat: Catalog) -> float:
    """Sec. III.B: ``C_HL^10G = $1400 ceil(x/72) + $500 ceil(x/24) + $400 (ceil(x/72) - #extraCPU_HL^10G)``, USD.

    Legacy switches on stock (zero CAPEX). 72 = 6k and 24 = 2k for k access ports per trunk.
    """
    p, k = cat.prices, cat.harmless.access_ports_per_trunk
    s = ceil_div(x, 6 * k)
    return p.server_usd * s + p.nic_2x40g_usd * ceil_div(x, 2 * k) + p.cpu_usd * (s - extra_cpu_hl_10g(x, k))


# --------------------------------------------------------------------------------------------
# Bills of materials (same formulas, itemised, with "what you already own")
# --------------------------------------------------------------------------------------------

def spare_servers_items(servers: int, owned: Owned, cat: Catalog) -> list[LineItem]:
    """The owned servers used of ``servers`` needed, as a negative (zero CAPEX) line (Sec. III.B)."""
    n = min(max(owned.spare_servers, 0), servers)
    return _items(("servers already owned (Sec. III.B: zero CAPEX)", -n, "server_usd", cat))


def _legacy(n: int, key: str, what: str, owned: Owned, cat: Catalog) -> list[LineItem]:
    """Legacy switches to buy: none if owned is None (the paper's "on stock" assumption)."""
    if owned.legacy_switches is None:
        return []
    return _items((f"legacy {what} switches to buy", max(n - max(owned.legacy_switches, 0), 0), key, cat))


def hardware_items(x: int, speed: Speed, cat: Catalog) -> list[LineItem]:
    """Sec. III.A ``C_HW``: ``ceil(x/48)`` 48-port OpenFlow switches (48x1G+4x10G or 48x10G+4x40G)."""
    _check_ports(x), _check_speed(speed)
    key = "of_switch_48x1g_usd" if speed == "1G" else "of_switch_48x10g_usd"
    what = "48x1G+4x10G" if speed == "1G" else "48x10G+4x40G"
    return _items((f"OpenFlow {what} switches", ceil_div(x, SWITCH_PORTS), key, cat))


def software_items(x: int, speed: Speed, cat: Catalog, owned: Owned = PAPER_OWNED) -> list[LineItem]:
    """Sec. III.A ``C_SW^1G`` / ``C_SW^10G`` as a bill of materials (see the module docstring)."""
    _check_ports(x), _check_speed(speed)
    if speed == "1G":
        s = ceil_div(x, 16)
        rows = [("servers (1 CPU, 4x1G built in)", s, "server_usd", cat),
                ("4x1G NICs (i350)", ceil_div(x, 4) - s, "nic_4x1g_usd", cat),
                ("second CPUs (#extraCPU_SW^1G)", s - extra_cpu_sw_1g(x), "cpu_usd", cat)]
    else:
        s = ceil_div(x, 12)
        rows = [("servers (1 CPU)", s, "server_usd", cat),
                ("4x10G NICs (X710)", ceil_div(x, 4), "nic_4x10g_usd", cat),
                ("second CPUs (#extraCPU_SW^10G)", s - extra_cpu_sw_10g(x), "cpu_usd", cat)]
    return _items(*rows) + spare_servers_items(s, owned, cat)


def harmless_items(x: int, speed: Speed, cat: Catalog, owned: Owned = PAPER_OWNED) -> list[LineItem]:
    """Sec. III.B ``C_HL^1G`` / ``C_HL^10G`` as a bill of materials, plus legacy switches if not owned."""
    _check_ports(x), _check_speed(speed)
    s, rows = _server_rows(x, speed, cat)
    if speed == "1G":
        legacy = _legacy(ceil_div(x, SWITCH_PORTS), "legacy_switch_48x1g_usd", "48x1G+4x10G", owned, cat)
    else:
        legacy = _legacy(ceil_div(x, SWITCH_PORTS), "legacy_switch_48x10g_usd", "48x10G+4x40G", owned, cat)
    return _items(*rows) + spare_servers_items(s, owned, cat) + legacy


def _server_rows(x: int, speed: Speed, cat: Catalog, label: str = "") -> tuple[int, list[tuple]]:
    """Sec. III.B: ``(servers, [(item, count, catalog key, cat)])`` of one HARMLESS server set for ``x`` ports: a
    1-CPU server per 12 (1G) / 6 (10G) trunks, a 4x10G (1G) / 2x40G (10G) trunk NIC per 4 / 2 trunks, the second CPUs
    (``#extraCPU_HL``); ``label`` prefixes the item names (``"standby "``)."""
    k = cat.harmless.access_ports_per_trunk
    if speed == "1G":
        s = ceil_div(x, 12 * k)
        return s, [(f"{label}HARMLESS servers (1 CPU)", s, "server_usd", cat),
                   (f"{label}4x10G trunk NICs (X710)", ceil_div(x, 4 * k), "nic_4x10g_usd", cat),
                   (f"{label}second CPUs (#extraCPU_HL^1G)", s - extra_cpu_hl_1g(x, k), "cpu_usd", cat)]
    s = ceil_div(x, 6 * k)
    return s, [(f"{label}HARMLESS servers (1 CPU)", s, "server_usd", cat),
               (f"{label}2x40G trunk NICs (XL710)", ceil_div(x, 2 * k), "nic_2x40g_usd", cat),
               (f"{label}second CPUs (#extraCPU_HL^10G)", s - extra_cpu_hl_10g(x, k), "cpu_usd", cat)]


def standby_items(x: int, speed: Speed, cat: Catalog, owned: Owned = PAPER_OWNED) -> list[LineItem]:
    """What a standby HARMLESS server set adds to :func:`harmless_items` (active/standby servers,
    docs/high-availability.md): the same servers, trunk NICs and second CPUs again, since the standby must carry
    every trunk's traffic when it takes over (each server has its own trunks to every legacy switch). Spare servers
    left over after the active set count as owned. Not in the paper.

    The legacy switches need a second trunk port per trunk: with the 4 uplinks of a 48x1G+4x10G switch that is 2
    trunks per server, i.e. 24 access ports per trunk instead of 12 (``harmless.access_ports_per_trunk`` in the
    catalog); this function does not change k.
    """
    _check_ports(x), _check_speed(speed)
    s, rows = _server_rows(x, speed, cat, "standby ")
    left = Owned(spare_servers=max(owned.spare_servers - s, 0))       # what the active set did not use
    return _items(*rows) + spare_servers_items(s, left, cat)


def switch_items(x: int, speed: Speed, cat: Catalog, owned: Owned = PAPER_OWNED) -> dict[str, list[LineItem] | None]:
    """Sec. III (Fig. 3a/3b): bills of materials of one x-port SDN switch built the three ways."""
    return {"hardware": hardware_items(x, speed, cat),
            "software": software_items(x, speed, cat, owned),
            "harmless": harmless_items(x, speed, cat, owned)}


# --------------------------------------------------------------------------------------------
# Sec. IV.B.3, Fig. 5c: greenfield CLOS data centre (L2 leaves + L3 spine), 1G access ports
# --------------------------------------------------------------------------------------------

def sw_clos_leaf_usd(cat: Catalog) -> float:
    """Sec. IV.B.3: software CLOS leaf "mounts 12x1G + 1x10G", USD.

    Built from Sec. III.A parts: server (4x1G built in) + 2 i350 (12x1G) + 1 X710 for the 10G
    uplink in the third slot, hence a second CPU: 1400 + 2*160 + 480 + 400 = $2,600.
    """
    p = cat.prices
    return p.server_usd + 2 * p.nic_4x1g_usd + p.nic_4x10g_usd + p.cpu_usd


def sw_clos_spine_usd(cat: Catalog) -> float:
    """Sec. IV.B.3: the one software spine server "with 12x10G capacity", USD.

    3 X710 in 3 slots plus a second CPU: 1400 + 3*480 + 400 = $3,240.
    """
    p = cat.prices
    return p.server_usd + 3 * p.nic_4x10g_usd + p.cpu_usd


def clos_items(x: int, cat: Catalog, owned: Owned = PAPER_OWNED) -> dict[str, list[LineItem] | None]:
    """Sec. IV.B.3, Fig. 5c: greenfield CLOS DC with x 1G access ports at the ToR (leaf) switches.

    The paper describes the topology in prose; this is the reading implemented:

    * Hardware: ``ceil(x/48)`` 48x1G+4x10G OpenFlow leaves, each with one 10G uplink to each of
      4 spines; 4 48x10G+4x40G OpenFlow spines bought up front ("huge initial investment"),
      which scale to 48 leaves (2,304 ports, the model's limit).
    * Software: leaves of 12x1G + 1x10G (:func:`sw_clos_leaf_usd`, ``ceil(x/12)`` of them) and
      *one* 12x10G spine server (:func:`sw_clos_spine_usd`), "providing 144 access ports at the
      most": above 144 ports the option is not available (``None``).
    * HARMLESS: 4 spines of a legacy 48x10G+4x40G switch plus a server "resulting in a sum of
      $4,100" and one legacy 48x1G+4x10G leaf per 48 ports plus a server at "$2,350". Those are
      the paper's stated totals (catalog ``hl_spine_server_usd`` / ``hl_leaf_server_usd``); the
      listed parts actually add up to 1400 + 2*480 + 1300 + 400 = $4,060 and 1400 + 2*480 =
      $2,360, an inconsistency of the paper. Legacy switches are on stock unless ``owned`` says
      otherwise. The paper's totals include the server, so a spare server saves ``server_usd``.

    Raises:
        InputError: ``x`` < 1 or above 2,304 ports.
    """
    _check_ports(x)
    if x > CLOS_MAX_PORTS:
        raise InputError("ports", f"{x} is above the {CLOS_MAX_PORTS} ports of the paper's two-tier CLOS (48 leaves of 48 ports)",
                         f"use at most {CLOS_MAX_PORTS} ports for --scenario clos")
    leaves, spines = ceil_div(x, SWITCH_PORTS), 4
    hw = _items(("OpenFlow 48x1G+4x10G leaf switches", leaves, "of_switch_48x1g_usd", cat),
                ("OpenFlow 48x10G+4x40G spine switches", spines, "of_switch_48x10g_usd", cat))
    sw: list[LineItem] | None = None
    if x <= CLOS_SW_MAX_PORTS:
        n = ceil_div(x, 12)
        p = cat.prices
        sw = [LineItem("leaf servers 12x1G+1x10G: server", n, "server_usd", p.server_usd),
              LineItem("leaf servers: 4x1G NICs (i350)", 2 * n, "nic_4x1g_usd", p.nic_4x1g_usd),
              LineItem("leaf servers: 4x10G NIC (X710) for the uplink", n, "nic_4x10g_usd", p.nic_4x10g_usd),
              LineItem("leaf servers: second CPU (third slot used)", n, "cpu_usd", p.cpu_usd),
              LineItem("spine server 12x10G: server", 1, "server_usd", p.server_usd),
              LineItem("spine server: 4x10G NICs (X710)", 3, "nic_4x10g_usd", p.nic_4x10g_usd),
              LineItem("spine server: second CPU", 1, "cpu_usd", p.cpu_usd)]
        sw += spare_servers_items(n + 1, owned, cat)
    hl = _items(("HARMLESS spine servers (paper: $4,100 each)", spines, "hl_spine_server_usd", cat),
                ("HARMLESS leaf servers (paper: $2,350 each)", leaves, "hl_leaf_server_usd", cat))
    hl += spare_servers_items(spines + leaves, owned, cat)
    hl += _legacy(leaves, "legacy_switch_48x1g_usd", "48x1G+4x10G leaf", owned, cat)
    hl += _legacy(spines, "legacy_switch_48x10g_usd", "48x10G+4x40G spine", owned, cat)
    return {"hardware": hw, "software": sw, "harmless": hl}


# --------------------------------------------------------------------------------------------
# Sec. IV.B.3, Fig. 5f: access-gateway tree (depth 3), 1G access ports
# --------------------------------------------------------------------------------------------

def sw_gateway_aggregation_usd(cat: Catalog) -> float:
    """Software aggregation server of the Fig. 5f tree, USD (this module's reading, not a paper figure).

    8x10G down (2 X710) + 2x40G up (1 XL710, third slot, so a second CPU):
    1400 + 2*480 + 500 + 400 = $3,260; serves 8 software leaves (96 access ports).
    """
    p = cat.prices
    return p.server_usd + 2 * p.nic_4x10g_usd + p.nic_2x40g_usd + p.cpu_usd


def sw_core_40g_usd(ports: int, cat: Catalog) -> float:
    """Software switch with ``ports`` 40G ports, USD, by the Sec. III.A rules for 40G.

    ``$1400 ceil(p/6) + $500 ceil(p/2) + $400 (ceil(p/6) - #extraCPU_SW^40G)``: a server holds 3
    XL710 (6x40G), 4 ports without a second CPU (see :func:`extra_cpu_sw_40g`).
    """
    p, s = cat.prices, ceil_div(ports, 6)
    return p.server_usd * s + p.nic_2x40g_usd * ceil_div(ports, 2) + p.cpu_usd * (s - extra_cpu_sw_40g(ports))


def hl_gateway_core_usd(cat: Catalog) -> float:
    """HARMLESS core of the Fig. 5f tree, USD: server + "three 2x100G NICs" + second CPU.

    The paper only says the step at 576 ports is "the three 2x100G NICs for HARMLESS"; a server
    with three NICs needs the third slot, hence the second CPU: 1400 + 3*1300 + 400 = $5,700.
    The legacy 40G core switch itself is on stock.
    """
    p = cat.prices
    return p.server_usd + 3 * p.nic_2x100g_usd + p.cpu_usd


def gateway_items(x: int, cat: Catalog, owned: Owned = PAPER_OWNED) -> dict[str, list[LineItem] | None]:
    """Sec. IV.B.3, Fig. 5f: greenfield access-gateway tree, depth 3, x 1G access ports.

    Paper: 48x1G leaves, 48x10G aggregation switches, one 40G core ($21,500, 32x40G), overall
    1:1 over-subscription; "the steep cost steps arrive at 576 forwarding ports" (the core switch,
    and the three 2x100G NICs for HARMLESS). Reading implemented:

    * Hardware: ``ceil(x/48)`` OpenFlow 48x1G+4x10G leaves; one OpenFlow 48x10G+4x40G aggregation
      switch per 12 leaves (4x10G uplinks each, 576 ports); the 32x40G core only once there are
      two or more aggregation switches (x > 576). Limit: 8 aggregation switches, 4,608 ports.
    * HARMLESS: leaves and aggregation switches are legacy switches on stock, each with a
      HARMLESS server priced like the CLOS leaf ($2,350) and spine ($4,100) servers of Fig. 5c
      (same roles, same 1:1 requirement); the core (x > 576) is a legacy 40G switch on stock plus
      :func:`hl_gateway_core_usd`.
    * Software (the paper gives no parts): leaves of 12x1G + 1x10G as in the CLOS
      (:func:`sw_clos_leaf_usd`); one aggregation server (:func:`sw_gateway_aggregation_usd`) per
      8 leaves; for two or more aggregation servers, a software core with 2x40G per aggregation
      server (:func:`sw_core_40g_usd`).

    Raises:
        InputError: ``x`` < 1 or above 4,608 ports.
    """
    _check_ports(x)
    if x > GATEWAY_MAX_PORTS:
        raise InputError("ports", f"{x} is above the {GATEWAY_MAX_PORTS} ports a 32x40G core can serve in the Fig. 5f tree",
                         f"use at most {GATEWAY_MAX_PORTS} ports for --scenario gateway")
    p = cat.prices
    leaves = ceil_div(x, SWITCH_PORTS)
    aggs = ceil_div(leaves, 12)
    core = 1 if aggs > 1 else 0
    hw = _items(("OpenFlow 48x1G+4x10G leaf switches", leaves, "of_switch_48x1g_usd", cat),
                ("OpenFlow 48x10G+4x40G aggregation switches", aggs, "of_switch_48x10g_usd", cat),
                ("OpenFlow 32x40G core switch", core, "of_core_40g_usd", cat))
    hl = _items(("HARMLESS leaf servers (as Fig. 5c leaf, $2,350)", leaves, "hl_leaf_server_usd", cat),
                ("HARMLESS aggregation servers (as Fig. 5c spine, $4,100)", aggs, "hl_spine_server_usd", cat),
                ("HARMLESS core server", core, "server_usd", cat),
                ("HARMLESS core: 2x100G NICs", 3 * core, "nic_2x100g_usd", cat),
                ("HARMLESS core: second CPU", core, "cpu_usd", cat))
    hl += spare_servers_items(leaves + aggs + core, owned, cat)
    hl += _legacy(leaves, "legacy_switch_48x1g_usd", "48x1G+4x10G leaf", owned, cat)
    hl += _legacy(aggs, "legacy_switch_48x10g_usd", "48x10G+4x40G aggregation", owned, cat)
    hl += _legacy(core, "legacy_core_40g_usd", "40G core", owned, cat)
    sw_leaves = ceil_div(x, 12)
    sw_aggs = ceil_div(sw_leaves, 8)
    core_ports = 2 * sw_aggs if sw_aggs > 1 else 0
    core_servers = ceil_div(core_ports, 6)
    sw = [LineItem("leaf servers 12x1G+1x10G: server", sw_leaves, "server_usd", p.server_usd),
          LineItem("leaf servers: 4x1G NICs (i350)", 2 * sw_leaves, "nic_4x1g_usd", p.nic_4x1g_usd),
          LineItem("leaf servers: 4x10G NIC (X710) uplink", sw_leaves, "nic_4x10g_usd", p.nic_4x10g_usd),
          LineItem("leaf servers: second CPU", sw_leaves, "cpu_usd", p.cpu_usd),
          LineItem("aggregation servers 8x10G+2x40G: server", sw_aggs, "server_usd", p.server_usd),
          LineItem("aggregation servers: 4x10G NICs (X710)", 2 * sw_aggs, "nic_4x10g_usd", p.nic_4x10g_usd),
          LineItem("aggregation servers: 2x40G NIC (XL710)", sw_aggs, "nic_2x40g_usd", p.nic_2x40g_usd),
          LineItem("aggregation servers: second CPU", sw_aggs, "cpu_usd", p.cpu_usd)]
    if core_ports:
        sw += [LineItem(f"core ({core_ports}x40G): servers", core_servers, "server_usd", p.server_usd),
               LineItem("core: 2x40G NICs (XL710)", ceil_div(core_ports, 2), "nic_2x40g_usd", p.nic_2x40g_usd),
               LineItem("core: second CPUs", core_servers - extra_cpu_sw_40g(core_ports), "cpu_usd", p.cpu_usd)]
    sw = [i for i in sw if i.qty != 0] + spare_servers_items(sw_leaves + sw_aggs + core_servers, owned, cat)
    return {"hardware": hw, "software": sw, "harmless": hl}


# --------------------------------------------------------------------------------------------
# One entry point for the CLI and the report
# --------------------------------------------------------------------------------------------

def scenario_items(scenario: str, x: int, speed: Speed, cat: Catalog,
                   owned: Owned = PAPER_OWNED) -> dict[str, list[LineItem] | None]:
    """Bills of materials of the three options for one scenario.

    Args:
        scenario: ``switch`` (Sec. III, Fig. 3a/3b), ``clos`` (Fig. 5c) or ``gateway`` (Fig. 5f).
        x: access ports (>= 1).
        speed: ``1G`` or ``10G`` access ports (``clos`` and ``gateway`` are 1G only, as in the paper).
        cat: the price catalog.
        owned: equipment already owned.

    Returns:
        ``{"hardware": [...], "software": [...], "harmless": [...]}``; ``None`` for an option the
        scenario cannot build at that size.

    Raises:
        InputError: unknown scenario or speed, bad port count.
    """
    _check_ports(x), _check_speed(speed)
    if scenario == "switch":
        return switch_items(x, speed, cat, owned)
    if scenario not in SCENARIOS:
        raise InputError("scenario", f"unknown scenario {scenario!r}", f"use one of {', '.join(SCENARIOS)}")
    if speed != "1G":
        raise InputError("speed", f"the {scenario} scenario of the paper (Sec. IV.B.3) has 1G access ports only",
                         "use --speed 1G with this scenario")
    return clos_items(x, cat, owned) if scenario == "clos" else gateway_items(x, cat, owned)


def scenario_totals(scenario: str, x: int, speed: Speed, cat: Catalog,
                    owned: Owned = PAPER_OWNED) -> dict[str, float | None]:
    """CAPEX per option in the catalog currency (``None`` if the option is unavailable)."""
    return {k: total(v) for k, v in scenario_items(scenario, x, speed, cat, owned).items()}


def crossings(xs: list[int], a: list[float | None], b: list[float | None]) -> list[int]:
    """Port counts where curve ``a`` stops being cheaper than ``b`` or starts being cheaper.

    Args:
        xs: increasing port counts.
        a, b: CAPEX of two options at those port counts (``None`` where unavailable).

    Returns:
        Each ``xs[i]`` at which ``sign(a - b)`` changes from ``xs[i-1]`` (ties count with the
        previous sign).
    """
    out: list[int] = []
    prev = 0
    for x, va, vb in zip(xs, a, b):
        if va is None or vb is None:
            prev = 0
            continue
        s = (va > vb) - (va < vb)
        if s != 0:
            if prev != 0 and s != prev:
                out.append(x)
            prev = s
    return out


ScenarioFn = Callable[[int, Catalog], dict[str, float | None]]
