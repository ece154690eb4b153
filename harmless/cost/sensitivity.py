"""Break-even and sensitivity: which catalog price moves the answer.

Every CAPEX model in :mod:`harmless.cost.models` is linear in each catalog price (a bill of
materials: quantity times unit price). So for one price ``p`` and two options A and B,
``C_A(p) - C_B(p) = d0 + (qA - qB) (p - p0)`` where ``qA``/``qB`` are the quantities bought at
that price. The break-even price, where the two options cost the same, is
``p* = p0 - d0 / (qA - qB)`` (none if ``qA == qB``, or if ``p*`` < 0). Pure functions.
"""
from __future__ import annotations

from dataclasses import dataclass

from harmless.cost.catalog import Catalog, price_keys
from harmless.cost.models import LineItem


def quantities(items: list[LineItem] | None) -> dict[str, int]:
    """Pieces bought per catalog price key (the derivative of CAPEX by that price)."""
    q: dict[str, int] = {}
    for i in items or []:
        q[i.price_key] = q.get(i.price_key, 0) + i.qty
    return q


@dataclass(frozen=True)
class BreakEven:
    """Where one price makes HARMLESS and an alternative cost the same.

    Attributes:
        price_key: catalog price field.
        current: its current value (catalog currency).
        other: the alternative option ("hardware" or "software").
        saving: alternative CAPEX minus HARMLESS CAPEX at the current prices.
        break_even: the price at which the saving is zero (``None``: never, for prices >= 0).
        factor: ``break_even / current`` (``None`` if either is missing or current is 0).
    """

    price_key: str
    current: float
    other: str
    saving: float
    break_even: float | None
    factor: float | None


def break_evens(items: dict[str, list[LineItem] | None], cat: Catalog) -> list[BreakEven]:
    """Break-even price of every catalog price, HARMLESS against each available alternative.

    Args:
        items: bills of materials per option (from :func:`harmless.cost.models.scenario_items`).
        cat: the catalog they were priced with.

    Returns:
        One :class:`BreakEven` per (price, alternative) pair where that price appears in either
        bill, sorted by how little the price has to move (closest factor to 1 first).
    """
    hl = items.get("harmless")
    out: list[BreakEven] = []
    if hl is None:
        return out
    q_hl = quantities(hl)
    c_hl = sum(i.total for i in hl)
    for other in ("hardware", "software"):
        alt = items.get(other)
        if alt is None:
            continue
        q_alt = quantities(alt)
        saving = sum(i.total for i in alt) - c_hl
        for key in price_keys():
            dq = q_hl.get(key, 0) - q_alt.get(key, 0)
            if key not in q_hl and key not in q_alt:
                continue
            p0 = float(getattr(cat.prices, key))
            be: float | None = None
            if dq != 0:
                # saving(p) = saving - dq * (p - p0) = 0  ->  p = p0 + saving / dq
                cand = p0 + saving / dq
                be = cand if cand >= 0 else None
            factor = be / p0 if (be is not None and p0 > 0) else None
            out.append(BreakEven(key, p0, other, saving, be, factor))

    def distance(b: BreakEven) -> float:
        if b.factor is None or b.factor <= 0:
            return float("inf")
        return max(b.factor, 1 / b.factor)

    out.sort(key=distance)
    return out


def tornado(items: dict[str, list[LineItem] | None], swing: float = 0.5) -> list[tuple[str, str, float, float]]:
    """Change of each option's saving against HARMLESS when one price moves by +-``swing``.

    Returns:
        ``(price_key, other_option, saving_at_low, saving_at_high)`` tuples in the catalog
        currency, largest spread first (the prices that move the answer most).
    """
    hl = items.get("harmless")
    rows: list[tuple[str, str, float, float]] = []
    if hl is None:
        return rows
    c_hl = sum(i.total for i in hl)
    for other in ("hardware", "software"):
        alt = items.get(other)
        if alt is None:
            continue
        saving = sum(i.total for i in alt) - c_hl
        d_hl, d_alt = {}, {}
        for i in hl:
            d_hl[i.price_key] = d_hl.get(i.price_key, 0.0) + i.total
        for i in alt:
            d_alt[i.price_key] = d_alt.get(i.price_key, 0.0) + i.total
        for key in sorted(set(d_hl) | set(d_alt)):
            # Spend at that price scales with the price: saving moves by swing * (alt spend - HL spend).
            delta = swing * (d_alt.get(key, 0.0) - d_hl.get(key, 0.0))
            rows.append((key, other, saving - delta, saving + delta))
    rows.sort(key=lambda r: -abs(r[3] - r[2]))
    return rows
