"""CAPEX/OPEX models against values worked out by hand from Csikor et al., IFIP Networking 2018.

Prices (default 2017 catalog): server 1400, CPU 400, i350 4x1G 160, X710 4x10G 480, XL710 2x40G 500,
2x100G 1300, OF 48x1G 2700, OF 48x10G 11200, OF 40G core 21500, HL CLOS spine 4100 / leaf 2350.
"""
from __future__ import annotations

import pytest

from harmless.cost import models as m
from harmless.cost import opex as ox
from harmless.cost.catalog import load_catalog
from harmless.cost.sensitivity import break_evens
from harmless.errors import InputError

CAT = load_catalog()


# ---- #extraCPU indicators at every boundary -------------------------------------------------

@pytest.mark.parametrize("x,want", [(1, 1), (12, 1), (13, 0), (15, 0), (16, 0), (17, 1), (28, 1), (29, 0), (32, 0)])
def test_extra_cpu_sw_1g(x, want):
    # 1 iff 0 < x mod 16 < 13
    assert m.extra_cpu_sw_1g(x) == want


@pytest.mark.parametrize("x,want", [(1, 1), (8, 1), (9, 0), (12, 0), (13, 1), (20, 1), (21, 0), (24, 0)])
def test_extra_cpu_sw_10g(x, want):
    # 1 iff 0 < x mod 12 < 9
    assert m.extra_cpu_sw_10g(x) == want


@pytest.mark.parametrize("x,want", [(1, 1), (96, 1), (97, 0), (144, 0), (145, 1), (240, 1), (241, 0), (288, 0)])
def test_extra_cpu_hl_1g(x, want):
    # 1 iff 0 < x mod 144 < 97
    assert m.extra_cpu_hl_1g(x) == want


@pytest.mark.parametrize("x,want", [(1, 1), (48, 1), (49, 0), (72, 0), (73, 1), (120, 1), (121, 0), (144, 0)])
def test_extra_cpu_hl_10g(x, want):
    # 1 iff 0 < x mod 72 < 49
    assert m.extra_cpu_hl_10g(x) == want


# ---- Sec. III closed forms at the ceil boundaries -------------------------------------------

@pytest.mark.parametrize("x,want", [
    (1, 1400),    # 1 server, ceil(1/4)-1 = 0 NICs, CPUs 1-1 = 0
    (4, 1400),    # built-in 4x1G only
    (5, 1560),    # 1400 + 160*(2-1)
    (12, 1720),   # 1400 + 160*(3-1); 12 mod 16 = 12 < 13 -> no second CPU
    (13, 2280),   # 1400 + 160*(4-1) + 400*(1-0): third NIC needs CPU 2
    (16, 2280),   # 16 mod 16 = 0 -> #extraCPU 0 -> 1 second CPU
    (17, 3680),   # 1400*2 + 160*(5-2) + 400*(2-1)
    (28, 4000),   # 2800 + 160*(7-2) + 400*(2-1)
    (29, 4560),   # 2800 + 160*(8-2) + 400*(2-0)
    (48, 6840),   # 1400*3 + 160*(12-3) + 400*(3-0)
    (49, 8240),   # 1400*4 + 160*(13-4) + 400*(4-1) = 5600 + 1440 + 1200
])
def test_capex_sw_1g(x, want):
    assert m.capex_sw_1g(x, CAT) == want


@pytest.mark.parametrize("x,want", [
    (1, 1880),    # 1400 + 480*1 + 400*(1-1)
    (4, 1880),
    (5, 2360),    # 1400 + 480*2
    (8, 2360),    # 8 mod 12 = 8 < 9 -> no second CPU
    (9, 3240),    # 1400 + 480*3 + 400*(1-0)
    (12, 3240),   # 12 mod 12 = 0 -> second CPU
    (13, 5120),   # 1400*2 + 480*4 + 400*(2-1)
    (48, 12960),  # 1400*4 + 480*12 + 400*(4-0)
])
def test_capex_sw_10g(x, want):
    assert m.capex_sw_10g(x, CAT) == want


@pytest.mark.parametrize("x,want1,want10", [
    (1, 2700, 11200), (48, 2700, 11200), (49, 5400, 22400), (96, 5400, 22400), (97, 8100, 33600),
])
def test_capex_hw(x, want1, want10):
    # $2700 ceil(x/48), $11200 ceil(x/48)
    assert m.capex_hw_1g(x, CAT) == want1
    assert m.capex_hw_10g(x, CAT) == want10


@pytest.mark.parametrize("x,want", [
    (1, 1880),     # 1400 + 480*1 + 400*(1-1)
    (12, 1880),
    (13, 1880),    # no boundary at 12/13 for HARMLESS at 1G
    (48, 1880),
    (49, 2360),    # 1400 + 480*2
    (96, 2360),    # 96 mod 144 = 96 < 97 -> no second CPU
    (97, 3240),    # 1400 + 480*3 + 400*(1-0)
    (144, 3240),   # 144 mod 144 = 0 -> second CPU
    (145, 5120),   # 1400*2 + 480*4 + 400*(2-1)
    (288, 6480),   # 1400*2 + 480*6 + 400*(2-0)
])
def test_capex_hl_1g(x, want):
    assert m.capex_hl_1g(x, CAT) == want


@pytest.mark.parametrize("x,want", [
    (1, 1900),     # 1400 + 500*1
    (24, 1900),
    (25, 2400),    # 1400 + 500*2
    (48, 2400),    # 48 mod 72 = 48 < 49 -> no second CPU
    (49, 3300),    # 1400 + 500*3 + 400*(1-0)
    (72, 3300),
    (73, 5200),    # 1400*2 + 500*4 + 400*(2-1)
])
def test_capex_hl_10g(x, want):
    assert m.capex_hl_10g(x, CAT) == want


@pytest.mark.parametrize("speed", ["1G", "10G"])
def test_bill_of_materials_adds_up_to_the_paper_formulas(speed):
    hw, sw, hl = ((m.capex_hw_1g, m.capex_sw_1g, m.capex_hl_1g) if speed == "1G"
                  else (m.capex_hw_10g, m.capex_sw_10g, m.capex_hl_10g))
    for x in range(1, 400):
        t = m.scenario_totals("switch", x, speed, CAT)
        assert (t["hardware"], t["software"], t["harmless"]) == (hw(x, CAT), sw(x, CAT), hl(x, CAT)), x


def test_access_ports_per_trunk_generalises_the_constants():
    cat6 = CAT.model_copy(update={"harmless": CAT.harmless.model_copy(update={"access_ports_per_trunk": 6})})
    # k = 6: one X710 serves 4k = 24 ports, a server 12k = 72, CPU 1 only 8k = 48
    assert m.capex_hl_1g(24, cat6) == 1880          # 1400 + 480
    assert m.capex_hl_1g(25, cat6) == 2360          # 1400 + 480*2
    assert m.capex_hl_1g(48, cat6) == 2360          # 48 mod 72 = 48 < 49
    assert m.capex_hl_1g(49, cat6) == 3240          # 1400 + 480*3 + 400
    assert m.capex_hl_1g(73, cat6) == 5120          # 2800 + 480*4 + 400*(2-1)


# ---- what you already own --------------------------------------------------------------------

def test_spare_servers_and_legacy_switches():
    t = m.scenario_totals("switch", 48, "1G", CAT, m.Owned(spare_servers=1))
    assert t["harmless"] == 480          # 1880 - 1400: the one server is owned
    assert t["software"] == 5440         # 6840 - 1400: 1 of 3 servers owned
    assert t["hardware"] == 2700         # OpenFlow switches cannot be "owned" legacy gear
    t = m.scenario_totals("switch", 48, "1G", CAT, m.Owned(spare_servers=5))
    assert t["software"] == 2640         # 6840 - 3*1400: never more than the servers needed
    assert t["harmless"] == 480
    t = m.scenario_totals("switch", 97, "1G", CAT, m.Owned(legacy_switches=0))
    assert t["harmless"] == 3840         # 3240 + 3 legacy 48x1G switches * 200
    t = m.scenario_totals("switch", 97, "1G", CAT, m.Owned(legacy_switches=2))
    assert t["harmless"] == 3440         # 3240 + 1 * 200
    t = m.scenario_totals("switch", 48, "10G", CAT, m.Owned(spare_servers=1, legacy_switches=1))
    assert t["harmless"] == 1000         # 2400 - 1400 + 0: everything but the 2 XL710 NICs owned


# ---- Sec. IV.B.3 scenarios -------------------------------------------------------------------

@pytest.mark.parametrize("x,hw,sw,hl", [
    (1, 47500, 5840, 18750),     # HW 4*11200 + 2700; SW 2600 + 3240; HL 4*4100 + 2350
    (12, 47500, 5840, 18750),
    (13, 47500, 8440, 18750),    # SW 2 leaves: 2*2600 + 3240
    (48, 47500, 13640, 18750),   # SW 4*2600 + 3240
    (49, 50200, 16240, 21100),   # HW/HL second leaf: 44800 + 2*2700; 16400 + 2*2350; SW 5*2600 + 3240
    (72, 50200, 18840, 21100),   # SW 6 leaves
    (73, 50200, 21440, 21100),   # SW 7 leaves: 18200 + 3240 > HL: HL becomes cheapest
    (144, 52900, 34440, 23450),  # SW 12 leaves, the most one 12x10G spine serves
    (145, 55600, None, 25800),   # SW not available
    (2304, 174400, None, 129200),  # 44800 + 48*2700; 16400 + 48*2350
])
def test_clos(x, hw, sw, hl):
    t = m.scenario_totals("clos", x, "1G", CAT)
    assert (t["hardware"], t["software"], t["harmless"]) == (hw, sw, hl)


def test_clos_leaf_and_spine_parts():
    assert m.sw_clos_leaf_usd(CAT) == 2600    # 1400 + 2*160 + 480 + 400
    assert m.sw_clos_spine_usd(CAT) == 3240   # 1400 + 3*480 + 400


@pytest.mark.parametrize("x,hw,sw,hl", [
    (1, 13900, 5860, 6450),       # HW 2700 + 11200; SW 2600 + 3260; HL 2350 + 4100
    (12, 13900, 5860, 6450),
    (13, 13900, 8460, 6450),      # SW second leaf
    (96, 16600, 24060, 8800),     # SW 8*2600 + 3260; HW 2*2700 + 11200; HL 2*2350 + 4100
    (97, 19300, 32320, 11150),    # HW 3*2700 + 11200; SW 9*2600 + 2*3260 + core(4x40G: 1400 + 2*500,
                                  # no 2nd CPU); HL 3*2350 + 4100
    (576, 43600, 150960, 32300),  # HW 12*2700 + 11200; HL 12*2350 + 4100
    (577, 79000, 158720, 44450),  # HW 13*2700 + 2*11200 + 21500; HL 13*2350 + 2*4100 + (1400 + 3*1300 + 400)
])
def test_gateway(x, hw, sw, hl):
    t = m.scenario_totals("gateway", x, "1G", CAT)
    assert (t["hardware"], t["software"], t["harmless"]) == (hw, sw, hl)


def test_gateway_sw_at_577_by_hand():
    # 49 leaves (12 ports each), ceil(49/8) = 7 aggregation servers, core 14x40G:
    # ceil(14/6) = 3 servers, 7 XL710, 14 mod 6 = 2 < 5 -> last server on CPU 1 -> 2 second CPUs
    core = 3 * 1400 + 7 * 500 + 2 * 400
    assert m.sw_core_40g_usd(14, CAT) == core
    assert m.scenario_totals("gateway", 577, "1G", CAT)["software"] == 49 * 2600 + 7 * 3260 + core


@pytest.mark.parametrize("scenario,limit", [("clos", 2304), ("gateway", 4608)])
def test_scenario_limits(scenario, limit):
    m.scenario_totals(scenario, limit, "1G", CAT)
    with pytest.raises(InputError, match="above"):
        m.scenario_totals(scenario, limit + 1, "1G", CAT)
    with pytest.raises(InputError, match="1G access ports only"):
        m.scenario_totals(scenario, 48, "10G", CAT)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "48", True])
def test_bad_ports(bad):
    with pytest.raises(InputError):
        m.scenario_totals("switch", bad, "1G", CAT)


def test_bad_speed_and_scenario():
    with pytest.raises(InputError, match="speed"):
        m.scenario_totals("switch", 48, "40G", CAT)
    with pytest.raises(InputError, match="scenario"):
        m.scenario_totals("ring", 48, "1G", CAT)


# ---- curves cross where the paper's do -------------------------------------------------------

def _cross(scenario, speed, hi, a, b):
    xs = list(range(1, hi + 1))
    ts = [m.scenario_totals(scenario, x, speed, CAT) for x in xs]
    return m.crossings(xs, [t[a] for t in ts], [t[b] for t in ts])


def test_fig3_crossings():
    # Fig. 3a: the software switch is cheapest up to 12 ports (1720 < 1880), dearer from 13 (2280);
    # hardware beats software from 17 ports on ("hardware ... more economical at 24 and 48");
    # HARMLESS is below hardware everywhere.
    assert _cross("switch", "1G", 300, "harmless", "software") == [13]
    assert _cross("switch", "1G", 300, "software", "hardware") == [17]
    assert _cross("switch", "1G", 300, "harmless", "hardware") == []
    # Fig. 3b: software vs HARMLESS at 5 ports (2360 > 1900); HW and SW alternate.
    assert _cross("switch", "10G", 300, "harmless", "software") == [5]
    assert _cross("switch", "10G", 300, "harmless", "hardware") == []
    assert _cross("switch", "10G", 60, "software", "hardware") == [37, 49]


def test_fig5_crossings():
    # Fig. 5c: one spine server makes software cheapest first; HARMLESS wins from 73 ports.
    assert _cross("clos", "1G", 2304, "harmless", "software") == [73]
    assert _cross("clos", "1G", 2304, "harmless", "hardware") == []
    # Fig. 5f: HARMLESS is the cheapest beyond the smallest trees; the step at 576 is in HW and HL.
    assert _cross("gateway", "1G", 1728, "harmless", "hardware") == []
    assert _cross("gateway", "1G", 1728, "harmless", "software") == [13]
    t576, t577 = (m.scenario_totals("gateway", x, "1G", CAT) for x in (576, 577))
    assert t577["hardware"] - t576["hardware"] == 2700 + 11200 + 21500
    assert t577["harmless"] - t576["harmless"] == 2350 + 4100 + 1400 + 3 * 1300 + 400


def test_crossings_helper():
    assert m.crossings([1, 2, 3, 4], [1, 1, 3, 3], [2, 2, 2, 2]) == [3]
    assert m.crossings([1, 2, 3], [1, 2, 3], [2, 2, 2]) == [3]   # tie at 2 keeps the previous sign
    assert m.crossings([1, 2, 3], [1, None, 3], [2, 2, 2]) == []


# ---- OPEX / TCO (Table I) ---------------------------------------------------------------------

def test_opex_table_i():
    f = ox.opex("harmless", 48, CAT)
    assert f.power_avg_w == 257.0                           # 164 + 0.5 * (350 - 164)
    assert f.energy_kwh_per_year == pytest.approx(2251.32)  # 257 W * 8760 h / 1000
    assert f.usd_per_year == pytest.approx(270.1584)        # 2251.32 kWh * 0.12 USD/kWh
    assert f.rack_units == 1.3
    hw = ox.opex("hardware", 49, CAT)                       # two blocks of 48 ports
    assert hw.power_avg_w == 758.0                          # 2 * (142 + 0.5 * 474)
    assert hw.rack_units == 2.0
    sw = ox.opex("software", 48, CAT)
    assert (sw.power_min_w, sw.power_max_w, sw.rack_units) == (70, 230, 3)
    assert ox.tco(1880, f.usd_per_year, 5) == pytest.approx(3230.792)   # 1880 + 5 * 270.1584


def test_energy_with_pue():
    assert ox.energy_kwh_per_year(100, pue=1.5) == pytest.approx(1314.0)   # 100 W * 1.5 * 8760 h / 1000


# ---- break-even -------------------------------------------------------------------------------

def test_break_even_prices():
    bes = {(b.price_key, b.other): b for b in break_evens(m.scenario_items("switch", 48, "1G", CAT), CAT)}
    # HW 2700 vs HL 1880: HARMLESS saves 820; the OF switch would have to cost 1880
    b = bes[("of_switch_48x1g_usd", "hardware")]
    assert (b.saving, b.break_even) == (820, 1880)
    # HL buys 1 server, HW none: the server would have to cost 1400 + 820 = 2220
    assert bes[("server_usd", "hardware")].break_even == 2220
    # SW buys 3 servers, HL 1: no server price makes SW cheaper
    assert bes[("server_usd", "software")].break_even is None


@pytest.mark.parametrize("speed", ["1G", "10G"])
@pytest.mark.parametrize("x", [48, 144, 145, 400])
def test_a_standby_server_set_doubles_the_server_side(x, speed):
    """Active/standby servers (docs/high-availability.md): the standby is the same servers, trunk NICs and CPUs
    again; spare servers the active set did not use count as owned; OPEX adds its share at full draw."""
    cat = load_catalog(None)
    extra = m.total(m.standby_items(x, speed, cat))
    assert extra == (m.capex_hl_1g if speed == "1G" else m.capex_hl_10g)(x, cat)
    servers = m.ceil_div(x, 12 * cat.harmless.access_ports_per_trunk if speed == "1G" else
                         6 * cat.harmless.access_ports_per_trunk)
    spare = m.total(m.standby_items(x, speed, cat, m.Owned(spare_servers=servers + 1)))
    assert spare == extra - cat.prices.server_usd                   # one spare left over after the active set
    assert m.total(m.standby_items(x, speed, cat, m.Owned(spare_servers=servers))) == extra
    op = ox.standby_opex(x, cat)
    assert op.power_avg_w == cat.opex.standby.power_w.max * ox.blocks_of_48(x) and op.usd_per_year > 0
    assert ox.standby_opex(x, cat, busy_polling=False).power_avg_w < op.power_avg_w
