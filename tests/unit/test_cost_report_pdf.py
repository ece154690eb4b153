"""``harmless capex report --pdf``: page 1 is a typeset summary whose table carries the models' figures."""
from __future__ import annotations

import re

import pypdf

from harmless.cost import models as m
from harmless.cost import opex as ox
from harmless.cost.catalog import load_catalog
from harmless.cost.report import compute, write_report


def _has(text: str, money: float) -> bool:
    """``money`` formatted as the report does (``12,345``) appears as a whole number in ``text``."""
    return re.search(rf"(?<![\d,.]){re.escape(f'{money:,.0f}')}(?![\d,])", text) is not None


def _page1(tmp_path, ports: int, speed: str, scenarios: list[str]) -> str:
    data = compute(load_catalog(None), ports, speed, scenarios)
    write_report(data, tmp_path / "r.html", tmp_path / "r.pdf")
    reader = pypdf.PdfReader(tmp_path / "r.pdf")
    assert len(reader.pages) > 1                         # the summary, then the figures
    return reader.pages[0].extract_text()


def test_first_page_has_title_inputs_table_and_verdict(tmp_path):
    cat = load_catalog(None)
    text = _page1(tmp_path, 48, "10G", ["switch", "gateway"])
    assert "HARMLESS cost report" in text and "Inputs" in text and "Verdict" in text
    assert "48 access ports at 10G" in text and cat.name in text
    # every CAPEX of the table, from the models themselves (not from the report code)
    for scenario, speed in (("switch", "10G"), ("gateway", "1G")):
        totals = m.scenario_totals(scenario, 48, speed, cat, m.PAPER_OWNED)
        for option, total in totals.items():
            assert total is not None and _has(text, total), (scenario, option, total)
            assert _has(text, total / 48), (scenario, option, "per port")
    # OPEX per year and TCO of the single switch (Table I)
    capex = m.scenario_totals("switch", 48, "10G", cat, m.PAPER_OWNED)
    for option in m.OPTIONS:
        yearly = ox.opex(option, 48, cat).usd_per_year
        assert _has(text, yearly), (option, "OPEX")
        assert _has(text, ox.tco(capex[option], yearly, cat.opex.years)), (option, "TCO")
    # the verdict names the cheapest option with its CAPEX
    cheapest = min(capex, key=capex.get)
    name = {"software": "the software switch", "hardware": "the hardware switch", "harmless": "HARMLESS"}[cheapest]
    assert re.search(rf"{re.escape(name)} is\s+cheapest at\s+{re.escape(f'{capex[cheapest]:,.0f}')}", text), text


def test_first_page_says_what_cannot_be_built(tmp_path):
    """At 200 ports the software CLOS (one 12x10G spine server, 144 ports at most) does not exist: the table shows
    a dash, the verdict says so, the other options' figures are there."""
    cat = load_catalog(None)
    totals = m.scenario_totals("clos", 200, "1G", cat, m.PAPER_OWNED)
    assert totals["software"] is None                  # the premise of this test
    text = _page1(tmp_path, 200, "1G", ["clos"])
    assert re.search(r"the software switch\s+cannot\s+be\s+built", text), text
    for option in ("hardware", "harmless"):
        assert _has(text, totals[option]), option
