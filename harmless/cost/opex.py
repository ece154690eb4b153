"""OPEX and total cost of ownership (Csikor et al., IFIP Networking 2018, Sec. IV.B.5, Table I).

Table I gives, for a 48x1G-port SDN switch built each way, the power draw (min and max, W) and
the rack space normalised to 48 ports (U): software switch 70-230 W / 3 U, hardware (HP) switch
142-616 W / 1 U, HARMLESS 164-350 W / 1.3 U. The paper gives no energy price, load, cooling or
rack-space price; those come from the catalog's ``opex`` section.

Model (pure functions; units in the names):

* ``blocks = ceil(x / 48)``: Table I's figures apply per block of 48 access ports (the paper's
  normalisation). They are measured at 1G; the paper has no 10G figures, so the same numbers are
  used at 10G (the report says so).
* average power ``P = (min + load * (max - min)) * blocks`` W;
* energy ``E = P * pue * 8760 h / 1000`` kWh/year;
* OPEX ``= E * energy_usd_per_kwh + rack_units * rack_unit_usd_per_year`` USD/year;
* TCO over N years ``= CAPEX + N * OPEX`` USD (no discounting, no price drift).
"""
from __future__ import annotations

from dataclasses import dataclass

from harmless.cost.catalog import Catalog
from harmless.cost.models import SWITCH_PORTS, ceil_div

HOURS_PER_YEAR = 8760


@dataclass(frozen=True)
class OpexFigures:
    """Yearly operating figures of one option.

    Attributes:
        power_min_w: idle power, W.
        power_max_w: full-load power, W.
        power_avg_w: average power at the catalog's load, W.
        energy_kwh_per_year: energy including the PUE overhead, kWh/year.
        rack_units: rack space, U.
        energy_usd_per_year: energy cost, USD/year.
        rack_usd_per_year: rack space cost, USD/year.
    """

    power_min_w: float
    power_max_w: float
    power_avg_w: float
    energy_kwh_per_year: float
    rack_units: float
    energy_usd_per_year: float
    rack_usd_per_year: float

    @property
    def usd_per_year(self) -> float:
        """Total OPEX, USD/year."""
        return self.energy_usd_per_year + self.rack_usd_per_year


def blocks_of_48(x: int) -> int:
    """Number of 48-access-port blocks Table I's per-switch figures are applied to (Sec. IV.B.5)."""
    return ceil_div(x, SWITCH_PORTS)


def average_power_w(p_min_w: float, p_max_w: float, load: float) -> float:
    """Average draw in W between idle (``load`` = 0) and full load (``load`` = 1), linear."""
    return p_min_w + load * (p_max_w - p_min_w)


def energy_kwh_per_year(power_w: float, pue: float = 1.0) -> float:
    """Energy in kWh/year of a constant draw of ``power_w`` W, times the PUE (cooling overhead)."""
    return power_w * pue * HOURS_PER_YEAR / 1000.0


def opex(option: str, x: int, cat: Catalog) -> OpexFigures:
    """Yearly OPEX of ``option`` ("software", "hardware", "harmless") for x access ports.

    Table I (Sec. IV.B.5) power and rack figures per 48 ports, scaled by :func:`blocks_of_48`.

    Returns:
        :class:`OpexFigures` in W, kWh/year, U and USD/year.
    """
    o = cat.opex
    pw = getattr(o.power_w, option)
    n = blocks_of_48(x)
    avg = average_power_w(pw.min, pw.max, o.load) * n
    kwh = energy_kwh_per_year(avg, o.pue)
    ru = getattr(o.rack_units_per_48_ports, option) * n
    return OpexFigures(pw.min * n, pw.max * n, avg, kwh, ru, kwh * o.energy_usd_per_kwh, ru * o.rack_unit_usd_per_year)


def standby_opex(x: int, cat: Catalog, busy_polling: bool = True) -> OpexFigures:
    """Yearly OPEX a standby HARMLESS server adds for x access ports (:class:`~harmless.cost.catalog.StandbyOpex`
    per 48 ports, scaled by :func:`blocks_of_48`); ``busy_polling`` (OVS-DPDK PMD threads) puts it at its max draw,
    else at the catalog's load like the others."""
    o, n = cat.opex, blocks_of_48(x)
    pw = o.standby.power_w
    avg = (pw.max if busy_polling else average_power_w(pw.min, pw.max, o.load)) * n
    kwh = energy_kwh_per_year(avg, o.pue)
    ru = o.standby.rack_units_per_48_ports * n
    return OpexFigures(pw.min * n, pw.max * n, avg, kwh, ru, kwh * o.energy_usd_per_kwh, ru * o.rack_unit_usd_per_year)


def tco(capex_usd: float, opex_usd_per_year: float, years: float) -> float:
    """Total cost of ownership in USD: ``CAPEX + years * OPEX`` (undiscounted)."""
    return capex_usd + years * opex_usd_per_year
