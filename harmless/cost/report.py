"""The cost report: HTML with embedded plots (and optionally a PDF), from the models.

:func:`compute` gathers every number (pure); :func:`figures` draws the plots; :func:`write_report`
is the only function that touches the file system. Nothing is written unless every input is
valid: files are written to a temporary name and renamed at the end.
"""
from __future__ import annotations

import base64
import datetime as _dt
import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from jinja2 import Environment, BaseLoader, select_autoescape  # noqa: E402

from harmless.cost import models as m  # noqa: E402
from harmless.cost import opex as ox  # noqa: E402
from harmless.cost.catalog import Catalog  # noqa: E402
from harmless.cost.sensitivity import BreakEven, break_evens, tornado  # noqa: E402

LABELS = {"software": "SW: software switch on servers",
          "hardware": "HW: COTS / white-box OpenFlow switch",
          "harmless": "HL: HARMLESS (legacy switch + server)"}
COLORS = {"software": "tab:blue", "hardware": "tab:red", "harmless": "tab:green"}
SHORT = {"software": "SW", "hardware": "HW", "harmless": "HL"}

#: (figure id, scenario, speed, default port range, title)
PLOTS = [
    ("3a", "switch", "1G", 200, "Fig. 3a: CAPEX of one SDN switch, 1G access ports (Sec. III)"),
    ("3b", "switch", "10G", 200, "Fig. 3b: CAPEX of one SDN switch, 10G access ports (Sec. III)"),
    ("5c", "clos", "1G", m.CLOS_MAX_PORTS, "Fig. 5c: greenfield CLOS data centre, L2+L3 (Sec. IV.B.3)"),
    ("5f", "gateway", "1G", 1728, "Fig. 5f: access-gateway tree, depth 3 (Sec. IV.B.3)"),
]


@dataclass
class Curve:
    """CAPEX curves of one plot: port counts and USD per option (None where unavailable)."""

    fig_id: str
    scenario: str
    speed: str
    title: str
    xs: list[int]
    ys: dict[str, list[float | None]]
    crossings: list[tuple[str, str, int]] = field(default_factory=list)


@dataclass
class ScenarioResult:
    """Costs of one scenario at the report's port count."""

    scenario: str
    speed: str
    ports: int
    items: dict[str, list[m.LineItem] | None]
    totals: dict[str, float | None]
    breakevens: list[BreakEven]
    tornado: list[tuple[str, str, float, float]]


@dataclass
class ReportData:
    """Everything the report shows (computed by :func:`compute`)."""

    cat: Catalog
    ports: int
    speed: str
    owned: m.Owned
    results: list[ScenarioResult]
    curves: list[Curve]
    opex: dict[str, ox.OpexFigures]
    capex_switch: dict[str, float | None]
    years: float
    generated: str


def _curve(fig_id: str, scenario: str, speed: str, max_ports: int, title: str, cat: Catalog, owned: m.Owned) -> Curve:
    xs = list(range(1, max_ports + 1))
    ys: dict[str, list[float | None]] = {o: [] for o in m.OPTIONS}
    for x in xs:
        t = m.scenario_totals(scenario, x, speed, cat, owned)
        for o in m.OPTIONS:
            ys[o].append(t[o])
    c = Curve(fig_id, scenario, speed, title, xs, ys)
    for a, b in (("harmless", "software"), ("harmless", "hardware"), ("software", "hardware")):
        for x in m.crossings(xs, ys[a], ys[b]):
            c.crossings.append((a, b, x))
    return c


def compute(cat: Catalog, ports: int, speed: str, scenarios: list[str], owned: m.Owned = m.PAPER_OWNED,
            max_ports: int | None = None) -> ReportData:
    """Compute every number of the report (pure; raises InputError on bad input before any file is written).

    Args:
        cat: price catalog.
        ports: access ports for the cost table, OPEX/TCO and sensitivity sections.
        speed: ``1G``/``10G`` for the ``switch`` scenario table (``clos``/``gateway`` are 1G).
        scenarios: any of ``switch``, ``clos``, ``gateway``.
        owned: equipment already owned.
        max_ports: upper end of the plotted port range (default: per figure).
    """
    results = []
    for sc in scenarios:
        sp = speed if sc == "switch" else "1G"
        items = m.scenario_items(sc, ports, sp, cat, owned)
        results.append(ScenarioResult(sc, sp, ports, items, {k: m.total(v) for k, v in items.items()},
                                      break_evens(items, cat), tornado(items)))
    curves = []
    for fig_id, sc, sp, default_max, title in PLOTS:
        if sc not in scenarios:
            continue
        limit = m.CLOS_MAX_PORTS if sc == "clos" else (m.GATEWAY_MAX_PORTS if sc == "gateway" else None)
        hi = max_ports or default_max
        if limit is not None:
            hi = min(hi, limit)
        curves.append(_curve(fig_id, sc, sp, hi, title, cat, owned))
    capex_switch = m.scenario_totals("switch", ports, speed, cat, owned)
    opex = {o: ox.opex(o, ports, cat) for o in m.OPTIONS}
    return ReportData(cat, ports, speed, owned, results, curves, opex, capex_switch, cat.opex.years,
                      _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


# ---------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------

def _money_axis(ax: Any, currency: str) -> None:
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_ylabel(f"CAPEX [{currency}]")


def _plot_curve(c: Curve, cat: Catalog) -> Any:
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for o in ("software", "hardware", "harmless"):
        xs = [x for x, y in zip(c.xs, c.ys[o]) if y is not None]
        ys = [y for y in c.ys[o] if y is not None]
        if xs:
            ax.plot(xs, ys, drawstyle="steps-post", color=COLORS[o], label=LABELS[o], linewidth=1.6)
    shown: set[int] = set()
    for a, b, x in c.crossings:
        if "harmless" not in (a, b) or x in shown or len(shown) >= 4:
            continue
        shown.add(x)
        ax.axvline(x, color="grey", linestyle=":", linewidth=0.9)
        ax.annotate(f" {SHORT[a]}={SHORT[b]} at {x}", (x, 0), xycoords=("data", "axes fraction"), rotation=90,
                    fontsize=7, ha="right", va="bottom", color="dimgrey")
    sw = [x for x, y in zip(c.xs, c.ys["software"]) if y is not None]
    if sw and sw[-1] < c.xs[-1]:
        y_end = c.ys["software"][sw[-1] - c.xs[0]]
        ax.plot([sw[-1]], [y_end], marker="x", color=COLORS["software"])
        ax.annotate(f"SW ends at {sw[-1]} ports", (sw[-1], y_end), textcoords="offset points", xytext=(8, -12),
                    fontsize=7, color=COLORS["software"])
    ax.set_title(c.title, fontsize=10)
    ax.set_xlabel(f"number of access ports ({c.speed} each)")
    _money_axis(ax, cat.currency)
    ax.set_xlim(0, c.xs[-1])
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.text(0.99, 0.01, f"catalog: {cat.name}", ha="right", fontsize=7, color="grey")
    fig.tight_layout()
    return fig


def _plot_tco(d: ReportData) -> Any:
    fig, ax = plt.subplots(figsize=(8, 4.8))
    years = [y / 4 for y in range(0, int(d.years * 4) + 1)]
    for o in ("software", "hardware", "harmless"):
        cap = d.capex_switch[o]
        if cap is None:
            continue
        ax.plot(years, [ox.tco(cap, d.opex[o].usd_per_year, y) for y in years], color=COLORS[o], label=LABELS[o])
    ax.set_title(f"TCO of one {d.ports}-port SDN switch ({d.speed}): CAPEX + energy/rack OPEX (Table I)", fontsize=10)
    ax.set_xlabel("years in operation [years]")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_ylabel(f"total cost of ownership [{d.cat.currency}]")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.text(0.99, 0.01, f"energy {d.cat.opex.energy_usd_per_kwh} {d.cat.currency}/kWh, load {d.cat.opex.load}, "
             f"PUE {d.cat.opex.pue}", ha="right", fontsize=7, color="grey")
    fig.tight_layout()
    return fig


def _plot_tornado(r: ScenarioResult, cat: Catalog) -> Any | None:
    rows = [row for row in r.tornado if row[2] != row[3]][:10]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.6))
    labels = [f"{k} (vs {SHORT[o]})" for k, o, _, _ in rows]
    base = {o: (r.totals[o] or 0) - (r.totals["harmless"] or 0) for o in ("hardware", "software")}
    for i, (k, o, lo, hi) in enumerate(rows):
        b = base[o]
        ax.barh(i, lo - b, left=b, color="tab:orange", height=0.6, label="price -50 %" if i == 0 else None)
        ax.barh(i, hi - b, left=b, color="tab:purple", height=0.6, label="price +50 %" if i == 0 else None)
        ax.plot([b, b], [i - 0.4, i + 0.4], color="black", linewidth=0.8)
    ax.axvline(0, color="red", linewidth=1.2, label="break-even (saving = 0)")
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel(f"saving of HARMLESS over the alternative [{cat.currency}]")
    sp = f", {r.speed}" if r.scenario == "switch" else ""
    ax.set_title(f"Sensitivity, {r.scenario} scenario at {r.ports} ports{sp}: one price moved by ±50 %", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)
    fig.tight_layout()
    return fig


def figures(d: ReportData) -> list[tuple[str, str, Any]]:
    """All report figures as ``(id, caption, matplotlib Figure)``."""
    out: list[tuple[str, str, Any]] = []
    for c in d.curves:
        out.append((f"fig{c.fig_id}", c.title, _plot_curve(c, d.cat)))
    out.append(("tco", "Total cost of ownership over time", _plot_tco(d)))
    for r in d.results:
        f = _plot_tornado(r, d.cat)
        if f is not None:
            out.append((f"tornado-{r.scenario}", f"Sensitivity of the {r.scenario} scenario", f))
    return out


def _png_b64(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return base64.b64encode(buf.getvalue()).decode("ascii")


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>HARMLESS cost report: {{ d.ports }} ports</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 60em; margin: 2em auto; color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: bold; padding: .3em 0; }
.best { background: #e6f4e6; font-weight: bold; }
.note { color: #555; font-size: .9em; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f4f4f4; padding: 0 .2em; }
</style></head><body>
<h1>HARMLESS cost report</h1>
<p>{{ d.ports }} access ports{% if has_switch %}, {{ d.speed }} for the single-switch case{% endif %}.
Prices from catalog <b>{{ d.cat.name }}</b> (<code>{{ d.cat.path }}</code>, {{ d.cat.currency }}; source: {{ d.cat.source }}).
Generated {{ d.generated }}.</p>
<p class="note">Models: Csikor et al., "HARMLESS: Cost-Effective Transitioning to SDN for Small Enterprises",
IFIP Networking 2018: Sec. III (single switch, Fig. 3), Sec. IV.B.3 (CLOS, Fig. 5c; access gateway, Fig. 5f), Table I (OPEX).
Owned equipment: {{ owned_text }}.</p>

<h2>Verdict</h2>
<ul>{% for s in verdict %}<li>{{ s }}</li>{% endfor %}</ul>

<h2>1. Cost table</h2>
{% for r in d.results %}
<table>
<caption>{{ scen_names[r.scenario] }}: {{ r.ports }} ports{% if r.scenario == 'switch' %} at {{ r.speed }}{% endif %}</caption>
<tr><th>option</th><th>CAPEX [{{ cur }}]</th><th>per port [{{ cur }}]</th><th>× HARMLESS</th></tr>
{% for o in ['software', 'hardware', 'harmless'] %}{% set t = r.totals[o] %}
<tr class="{{ 'best' if o == cheapest[r.scenario] else '' }}"><td>{{ labels[o] }}</td>
{% if t is none %}<td colspan="3">not available at this size (see notes)</td>{% else %}
<td>{{ money(t) }}</td><td>{{ money(t / r.ports) }}</td>
<td>{% if r.totals['harmless'] %}{{ '%.2f' % (t / r.totals['harmless']) }}{% else %}–{% endif %}</td>{% endif %}</tr>
{% endfor %}
</table>
<details><summary>Bill of materials</summary>
{% for o in ['software', 'hardware', 'harmless'] %}{% if r.items[o] %}
<table><caption>{{ labels[o] }}</caption><tr><th>item</th><th>qty</th><th>unit [{{ cur }}]</th><th>total [{{ cur }}]</th><th>catalog key</th></tr>
{% for i in r.items[o] %}<tr><td>{{ i.item }}</td><td>{{ i.qty }}</td><td>{{ money(i.unit) }}</td><td>{{ money(i.total) }}</td><td><code>{{ i.price_key }}</code></td></tr>{% endfor %}
</table>{% endif %}{% endfor %}
</details>
{% endfor %}

<h2>2. CAPEX over the port range</h2>
<p class="note">Curves are step functions of the ceil terms of the paper's formulas; dotted lines mark where HARMLESS
crosses another option.</p>
{% for c in d.curves %}
<h3>{{ c.title }}</h3>
<img alt="{{ c.title }}" src="data:image/png;base64,{{ pngs['fig' + c.fig_id] }}">
<p class="note">Crossings in 1–{{ c.xs[-1] }} ports: {% for a, b, x in c.crossings %}{{ short[a] }}/{{ short[b] }} at {{ x }}{{ ', ' if not loop.last }}{% else %}none (the order of the options never changes){% endfor %}.</p>
{% endfor %}

<h2>3. OPEX and total cost of ownership</h2>
<p class="note">Table I of the paper, per 48 access ports (scaled by ceil(ports/48) = {{ blocks }}); measured at 1G{% if d.speed != '1G' %}: the paper has no {{ d.speed }} figures, so the 1G figures are used{% endif %}.
Energy {{ d.cat.opex.energy_usd_per_kwh }} {{ cur }}/kWh, load {{ d.cat.opex.load }} (0 = idle, 1 = full), PUE {{ d.cat.opex.pue }},
rack space {{ d.cat.opex.rack_unit_usd_per_year }} {{ cur }}/U/year, horizon {{ d.years }} years (none of these is in the paper).</p>
<table><caption>Single {{ d.ports }}-port switch at {{ d.speed }}</caption>
<tr><th>option</th><th>power min–max [W]</th><th>average [W]</th><th>energy [kWh/year]</th><th>rack [U]</th><th>OPEX [{{ cur }}/year]</th><th>CAPEX [{{ cur }}]</th><th>TCO {{ d.years }} years [{{ cur }}]</th></tr>
{% for o in ['software', 'hardware', 'harmless'] %}{% set f = d.opex[o] %}
<tr><td>{{ labels[o] }}</td><td>{{ '%.0f–%.0f' % (f.power_min_w, f.power_max_w) }}</td><td>{{ '%.0f' % f.power_avg_w }}</td>
<td>{{ '{:,.0f}'.format(f.energy_kwh_per_year) }}</td><td>{{ '%.1f' % f.rack_units }}</td><td>{{ money(f.usd_per_year) }}</td>
<td>{{ money(d.capex_switch[o]) }}</td><td>{{ money(tco[o]) }}</td></tr>{% endfor %}
</table>
<img alt="TCO" src="data:image/png;base64,{{ pngs['tco'] }}">

<h2>4. Break-even and sensitivity: which price moves the answer</h2>
<p class="note">All models are linear in each price, so for each price there is one value at which HARMLESS and an
alternative cost the same. Rows are sorted by how little the price has to move; "never" means no non-negative price
makes the alternative cheaper (or dearer) at this size.</p>
{% for r in d.results %}
<table><caption>{{ scen_names[r.scenario] }} at {{ r.ports }} ports</caption>
<tr><th>price</th><th>vs</th><th>now [{{ cur }}]</th><th>HARMLESS saves [{{ cur }}]</th><th>break-even price [{{ cur }}]</th><th>× now</th></tr>
{% for b in r.breakevens[:8] %}<tr><td><code>{{ b.price_key }}</code></td><td>{{ short[b.other] }}</td><td>{{ money(b.current) }}</td><td>{{ money(b.saving) }}</td>
<td>{% if b.break_even is none %}never{% else %}{{ money(b.break_even) }}{% endif %}</td><td>{% if b.factor is none %}–{% else %}{{ '%.2f' % b.factor }}{% endif %}</td></tr>{% endfor %}
</table>
{% if pngs.get('tornado-' + r.scenario) %}<img alt="sensitivity" src="data:image/png;base64,{{ pngs['tornado-' + r.scenario] }}">{% endif %}
{% endfor %}

<h2>5. Inputs used</h2>
<table><caption>Catalog <code>{{ d.cat.path }}</code>: prices</caption><tr><th>key</th><th>{{ cur }}</th></tr>
{% for k, v in prices %}<tr><td><code>{{ k }}</code></td><td>{{ money(v) }}</td></tr>{% endfor %}
<tr><td><code>harmless.access_ports_per_trunk</code></td><td>{{ d.cat.harmless.access_ports_per_trunk }}</td></tr>
</table>
<table><caption>OPEX inputs (Table I per 48 ports)</caption><tr><th>option</th><th>power min [W]</th><th>power max [W]</th><th>rack [U]</th></tr>
{% for o in ['software', 'hardware', 'harmless'] %}<tr><td>{{ labels[o] }}</td><td>{{ d.cat.opex.power_w[o].min }}</td><td>{{ d.cat.opex.power_w[o].max }}</td><td>{{ d.cat.opex.rack_units_per_48_ports[o] }}</td></tr>{% endfor %}
</table>

<h2>6. How the paper was read</h2>
<ul class="note">
<li>Legacy switches are on stock (zero CAPEX) unless stated above; spare servers save the server price, NICs and second CPUs are still bought.</li>
<li><code>#extraCPU</code> is 1 when the last server fits on CPU 1's two PCIe slots, so second CPUs bought = servers − #extraCPU.</li>
<li>Fig. 5c: the paper's HARMLESS spine/leaf totals ($4,100 / $2,350) are used as stated, although the listed parts sum to $4,060 / $2,360.
The software CLOS has one 12x10G spine server, so it stops at 144 ports.</li>
<li>Fig. 5f: the HARMLESS leaf/aggregation servers are priced like the Fig. 5c leaf/spine servers; the HARMLESS core is a server with three 2x100G NICs and a second CPU;
the software tree (no parts in the paper) uses 12x1G+1x10G leaves, 8x10G+2x40G aggregation servers and a 40G software core.</li>
<li>Two-tier CLOS limit 2,304 ports (48 leaves); tree limit 4,608 ports (32x40G core).</li>
</ul>
</body></html>
"""

SCEN_NAMES = {"switch": "Single SDN switch (Sec. III)", "clos": "CLOS data centre (Fig. 5c)",
              "gateway": "Access-gateway tree (Fig. 5f)"}


def _money(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def render_html(d: ReportData, pngs: dict[str, str]) -> str:
    """Render the self-contained HTML report (plots embedded as base64 PNG)."""
    env = Environment(loader=BaseLoader(), autoescape=select_autoescape(default=True, default_for_string=True))
    cheapest = {}
    for r in d.results:
        avail = {o: t for o, t in r.totals.items() if t is not None}
        cheapest[r.scenario] = min(avail, key=avail.get) if avail else None
    o = d.owned
    owned_text = ("legacy switches on stock (the paper's assumption)" if o.legacy_switches is None
                  else f"{o.legacy_switches} legacy switch(es) on stock, the rest bought")
    owned_text += f", {o.spare_servers} spare server(s)"
    tco = {k: (None if d.capex_switch[k] is None else ox.tco(d.capex_switch[k], d.opex[k].usd_per_year, d.years))
           for k in m.OPTIONS}
    return env.from_string(_TEMPLATE).render(
        d=d, pngs=pngs, labels=LABELS, short=SHORT, scen_names=SCEN_NAMES, cur=d.cat.currency, money=_money,
        cheapest=cheapest, owned_text=owned_text, tco=tco, blocks=ox.blocks_of_48(d.ports),
        prices=list(d.cat.prices.model_dump().items()), has_switch=any(r.scenario == "switch" for r in d.results),
        verdict=verdict(d))


def verdict(d: ReportData) -> list[str]:
    """The report's conclusion, one sentence per scenario plus one on the TCO (pure).

    For each scenario: the cheapest option by CAPEX at ``d.ports`` ports and what it saves against the next cheapest
    (absolute and in percent of that option's CAPEX); options not available at this size are said so. Then the
    option with the lowest TCO of one switch over ``d.years`` years (CAPEX + Table I OPEX).

    Returns:
        Sentences, e.g. ``["Single SDN switch (Sec. III), 48 x 1G: HARMLESS is cheapest at 4,210 USD, 1,790 USD
        (30 %) less than software switch.", ...]``.
    """
    cur = d.cat.currency
    names = {"software": "the software switch", "hardware": "the hardware switch", "harmless": "HARMLESS"}
    out = []
    for r in d.results:
        avail = sorted((t, o) for o, t in r.totals.items() if t is not None)
        where = f"{SCEN_NAMES[r.scenario]}, {r.ports} x {r.speed} ports"
        if not avail:
            out.append(f"{where}: no option is available at this size.")
            continue
        (t0, o0), rest = avail[0], avail[1:]
        s = f"{where}: {names[o0]} is cheapest at {_money(t0)} {cur}"
        if rest:
            t1, o1 = rest[0]
            pct = f" ({100 * (t1 - t0) / t1:.0f} %)" if t1 else ""
            s += f", {_money(t1 - t0)} {cur}{pct} less than {names[o1]}"
        missing = [names[o] for o, t in r.totals.items() if t is None]
        if missing:
            s += f"; {' and '.join(missing)} cannot be built at this size"
        out.append(s + ".")
    tco = {o: ox.tco(c, d.opex[o].usd_per_year, d.years) for o, c in d.capex_switch.items() if c is not None}
    if tco:
        best = min(tco, key=tco.get)
        out.append(f"Over {d.years:g} years one {d.ports}-port {d.speed} switch costs least as {names[best]}: "
                   f"TCO {_money(tco[best])} {cur} (CAPEX + energy and rack OPEX of Table I).")
    return out


#: short names of the options and scenarios on the summary page
OPTION_SHORT = {"software": "software switch", "hardware": "hardware switch", "harmless": "HARMLESS"}
SCEN_SHORT = {"switch": "single switch (Sec. III)", "clos": "CLOS DC (Fig. 5c)", "gateway": "gateway tree (Fig. 5f)"}


def summary_rows(d: ReportData) -> tuple[list[str], list[list[str]], list[int]]:
    """The summary page's table (pure): per scenario and option CAPEX, per port, ratio to HARMLESS, and for the
    single-switch scenario OPEX per year and TCO over ``d.years`` years (amounts in the catalog's currency).

    Returns:
        ``(header, rows, cheapest)``: cell texts (money as ``12,345``; ``–`` where not available or not applicable)
        and the indices of the rows holding each scenario's cheapest option.
    """
    header = ["scenario", "option", "CAPEX", "per port", "ratio", "OPEX / year", f"TCO {d.years:g} years"]
    rows: list[list[str]] = []
    cheapest: list[int] = []
    for r in d.results:
        hl = r.totals["harmless"]
        avail = {o: t for o, t in r.totals.items() if t is not None}
        best = min(avail, key=avail.get) if avail else None
        for i, o in enumerate(("software", "hardware", "harmless")):
            t = r.totals[o]
            single = r.scenario == "switch" and r.speed == d.speed
            opex = d.opex[o].usd_per_year if single else None
            tco = ox.tco(t, opex, d.years) if (single and t is not None) else None
            rows.append([SCEN_SHORT[r.scenario] if i == 0 else "", OPTION_SHORT[o], _money(t),
                         _money(None if t is None else t / r.ports),
                         "–" if (t is None or not hl) else f"{t / hl:.2f}", _money(opex), _money(tco)])
            if o == best:
                cheapest.append(len(rows) - 1)
    return header, rows, cheapest


def _table(fig: Any, top: float, rows: list[list[str]], widths: list[float], header: list[str] | None = None,
           row_h: float = 0.024, fontsize: float = 8.5) -> tuple[Any, float]:
    """A matplotlib table filling the page width from ``top`` (figure fraction) down, one ``row_h`` per row.
    Returns the table and the figure y of its bottom edge."""
    n = len(rows) + (1 if header else 0)
    ax = fig.add_axes([0.07, top - row_h * n, 0.86, row_h * n])
    ax.axis("off")
    tbl = ax.table(cellText=rows, colLabels=header, colWidths=widths, bbox=[0, 0, 1, 1], cellLoc="left")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(fontsize)
    for cell in tbl.get_celld().values():
        cell.set_edgecolor("#bbbbbb")
        cell.PAD = 0.03
    return tbl, top - row_h * n


def _pdf_summary_page(d: ReportData) -> Any:
    """Page 1 of the PDF: title, inputs, the CAPEX/TCO table per option and the verdict, typeset on A4 with
    matplotlib's text and table artists (real table cells, proportional fonts)."""
    import textwrap

    cur = d.cat.currency
    fig = plt.figure(figsize=(8.27, 11.69))                    # A4 portrait, inches
    fig.text(0.07, 0.955, "HARMLESS cost report", fontsize=22, weight="bold", va="top")
    fig.text(0.07, 0.915, f"{d.ports} access ports at {d.speed} · catalog \u201c{d.cat.name}\u201d · "
             f"generated {d.generated}", fontsize=10, color="dimgrey", va="top")
    o = d.owned
    owned = ("legacy switches on stock (the paper's assumption)" if o.legacy_switches is None
             else f"{o.legacy_switches} legacy switch(es) on stock, the rest bought")
    default = d.cat.path.endswith(" (default)")
    catalog_file = Path(d.cat.path.removesuffix(" (default)")).name + (", built in" if default else "")
    source = d.cat.source if len(d.cat.source) <= 85 else d.cat.source[:84] + "\u2026"
    inputs = [
        ["access ports", f"{d.ports}; {d.speed} for the single switch (CLOS and gateway tree: 1G)"],
        ["scenarios", ", ".join(SCEN_SHORT[r.scenario] for r in d.results)],
        ["price catalog", f"{d.cat.name} ({catalog_file}), prices in {cur}"],
        ["catalog source", source],
        ["owned equipment", f"{owned}; {o.spare_servers} spare server(s)"],
        ["OPEX inputs", f"{d.cat.opex.energy_usd_per_kwh} {cur}/kWh, load {d.cat.opex.load}, PUE {d.cat.opex.pue}, "
                        f"rack {d.cat.opex.rack_unit_usd_per_year} {cur}/U/year, horizon {d.years:g} years"],
        ["cost models", "Csikor et al., IFIP Networking 2018: Sec. III, Sec. IV.B.3, Table I"],
    ]
    fig.text(0.07, 0.87, "Inputs", fontsize=13, weight="bold", va="top")
    tbl, y = _table(fig, 0.845, inputs, [0.2, 0.8])
    for (_, c), cell in tbl.get_celld().items():
        cell.visible_edges = "horizontal"
        if c == 0:
            cell.get_text().set_weight("bold")

    header, rows, best = summary_rows(d)
    fig.text(0.07, y - 0.03, f"CAPEX and TCO per option (amounts in {cur})", fontsize=13, weight="bold", va="top")
    tbl, y = _table(fig, y - 0.055, rows, [0.23, 0.17, 0.11, 0.10, 0.08, 0.13, 0.18], header=header)
    for (r, c), cell in tbl.get_celld().items():
        cell.get_text().set_horizontalalignment("right" if c >= 2 else "left")
        cell._loc = "right" if c >= 2 else "left"
        if r == 0:
            cell.set_facecolor("#e8e8e8")
            cell.get_text().set_weight("bold")
        elif r - 1 in best and c >= 1:
            cell.set_facecolor("#e3f2e3")
            cell.get_text().set_weight("bold")
    fig.text(0.07, y - 0.01, "Bold on green: the cheapest option of each scenario by CAPEX. Ratio: CAPEX divided by "
             "HARMLESS's CAPEX in the same scenario.\nOPEX (energy and rack space, Table I per 48 ports) and TCO "
             "(CAPEX + OPEX over the horizon) are given for the single switch"
             + (f" (the paper measured 1G only; its 1G figures are used for {d.speed})." if d.speed != "1G" else "."),
             fontsize=7.5, color="dimgrey",
             va="top", linespacing=1.4)
    fig.text(0.07, y - 0.06, "Verdict", fontsize=13, weight="bold", va="top")
    lines = []
    for s in verdict(d):
        lines += textwrap.wrap(s, 100, initial_indent="\u2022 ", subsequent_indent="   ")
    fig.text(0.07, y - 0.085, "\n".join(lines), fontsize=9.5, va="top", linespacing=1.5)
    fig.text(0.07, 0.035, "Next pages: the paper's Fig. 3a/3b/5c/5f over the port range, the TCO over time and the "
             "sensitivity of each scenario to its prices.\nThe HTML report also has the bill of materials and the "
             "break-even price of every item.", fontsize=7.5, color="dimgrey", va="bottom")
    return fig


def write_report(d: ReportData, out_html: str | Path, out_pdf: str | Path | None = None) -> list[Path]:
    """Draw the figures and write the HTML (and PDF) report atomically.

    Args:
        d: the computed report data.
        out_html: HTML file to write.
        out_pdf: optional PDF file (a typeset summary page, then one page per figure).

    Returns:
        The paths written.
    """
    figs = figures(d)
    try:
        pngs = {fid: _png_b64(f) for fid, _, f in figs}
        html = render_html(d, pngs)
        written = [_atomic_write(Path(out_html), html.encode("utf-8"))]
        if out_pdf is not None:
            buf = io.BytesIO()
            # TrueType (42) instead of Type 3 fonts: the text stays text (searchable, copyable, extractable)
            with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(buf) as pdf:
                page = _pdf_summary_page(d)
                pdf.savefig(page)
                plt.close(page)
                for _, _, f in figs:
                    pdf.savefig(f)
                info = pdf.infodict()
                info["Title"] = f"HARMLESS cost report ({d.ports} ports)"
            written.append(_atomic_write(Path(out_pdf), buf.getvalue()))
        return written
    finally:
        for _, _, f in figs:
            plt.close(f)


def _atomic_write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
