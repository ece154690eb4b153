"""Price catalog: the inputs of every cost model, validated.

The default catalog, ``catalog_2017.yaml`` next to this file, holds the 2017 figures of
Csikor et al., "HARMLESS: Cost-Effective Transitioning to SDN for Small Enterprises",
IFIP Networking 2018 (Sec. III.A/B, Sec. IV.B.3, Table I). A user copies it, edits the numbers
and passes the copy by path. Every problem in a catalog is reported as an
:class:`~harmless.errors.InputError` whose *where* names the file and the field
(``mycat.yaml: prices.server_usd``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harmless.errors import InputError

#: The catalog shipped with the package (2017 prices from the paper).
DEFAULT_CATALOG_PATH = Path(__file__).with_name("catalog_2017.yaml")

_Money = Field(ge=0, strict=True)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Prices(_Strict):
    """Unit prices in the catalog's currency (USD in the default catalog), one piece each.

    Paper sources: Sec. III.A (server, CPU, i350/X710/XL710 NICs, 48-port OpenFlow switches),
    Sec. IV.B.3 (2x100G NIC, 40G core, HARMLESS CLOS spine/leaf server totals), Sec. III.B
    (legacy switches: "a couple of hundred USD", not a figure).
    """

    server_usd: float = _Money
    cpu_usd: float = _Money
    nic_4x1g_usd: float = _Money
    nic_4x10g_usd: float = _Money
    nic_2x40g_usd: float = _Money
    nic_2x100g_usd: float = _Money
    of_switch_48x1g_usd: float = _Money
    of_switch_48x10g_usd: float = _Money
    of_core_40g_usd: float = _Money
    hl_spine_server_usd: float = _Money
    hl_leaf_server_usd: float = _Money
    legacy_switch_48x1g_usd: float = _Money
    legacy_switch_48x10g_usd: float = _Money
    legacy_core_40g_usd: float = _Money


class HarmlessParams(_Strict):
    """HARMLESS design parameters (Sec. III.B).

    Attributes:
        access_ports_per_trunk: access ports multiplexed onto one trunk port (paper: 12).
    """

    access_ports_per_trunk: int = Field(ge=1, strict=True)


class PowerRange(_Strict):
    """Power draw in W of one 48x1G-port SDN switch (Table I): idle (``min``) and full load (``max``)."""

    min: float = _Money
    max: float = _Money


class PowerPerOption(_Strict):
    """Table I power columns, W per 48 access ports."""

    software: PowerRange
    hardware: PowerRange
    harmless: PowerRange


class RackPerOption(_Strict):
    """Table I rack column, U per 48 access ports."""

    software: float = _Money
    hardware: float = _Money
    harmless: float = _Money


class StandbyOpex(_Strict):
    """What a standby HARMLESS server adds per 48 access ports (active/standby servers, docs/high-availability.md;
    not in the paper). The defaults come from Table I as the active server's share does: one server's draw (the
    software switch's 70/230 W are three 16x1G servers, so 23.3/76.7 W each) and 1U, each shared by the three
    legacy 48-port switches one HARMLESS server serves (Sec. IV.B.5: "1.3U normalized to 48 ports"). A standby whose
    OVS-DPDK threads busy-poll draws its ``max`` whatever the load.
    """

    power_w: PowerRange = PowerRange(min=7.8, max=25.6)
    rack_units_per_48_ports: float = Field(0.33, ge=0, strict=True)


class Opex(_Strict):
    """OPEX inputs: Table I (power, rack space) plus the tariffs the paper does not give.

    Attributes:
        power_w: Table I, W per 48 access ports, min/max.
        rack_units_per_48_ports: Table I, U per 48 access ports.
        energy_usd_per_kwh: energy price, USD/kWh (not in the paper).
        load: 0..1, where the average draw sits between min (0) and max (1) power (not in the paper).
        pue: power usage effectiveness, >= 1, multiplies the IT energy to include cooling (not in the paper).
        rack_unit_usd_per_year: rack space price, USD per U per year (not in the paper).
        years: TCO horizon in years (not in the paper).
        standby: what a standby HARMLESS server adds (:class:`StandbyOpex`; not in the paper).
    """

    power_w: PowerPerOption
    rack_units_per_48_ports: RackPerOption
    energy_usd_per_kwh: float = _Money
    load: float = Field(ge=0, le=1, strict=True)
    pue: float = Field(ge=1, strict=True)
    rack_unit_usd_per_year: float = _Money
    years: float = Field(gt=0, strict=True)
    standby: StandbyOpex = StandbyOpex()


class Catalog(_Strict):
    """A complete, validated cost catalog.

    Attributes:
        name: human-readable name shown in reports.
        currency: ISO code of every price (the default catalog is USD).
        source: where the numbers come from.
        prices: unit prices.
        harmless: HARMLESS design parameters.
        opex: operating-cost inputs.
        path: the file it was loaded from (set by the loader, not read from the file).
    """

    name: str
    currency: str = "USD"
    source: str = ""
    prices: Prices
    harmless: HarmlessParams
    opex: Opex
    path: str = ""

    def with_prices(self, **changes: float) -> "Catalog":
        """Return a copy with some prices replaced (used by the sensitivity analysis)."""
        return self.model_copy(update={"prices": self.prices.model_copy(update=changes)})


def price_keys() -> list[str]:
    """Names of all price fields, in catalog order."""
    return list(Prices.model_fields)


def _describe(err: dict[str, Any]) -> tuple[str, str, str]:
    loc = ".".join(str(p) for p in err["loc"])
    kind = err["type"]
    value = err.get("input")
    if kind == "missing":
        return loc, "missing", "add it (copy the line from the default catalog, harmless/cost/catalog_2017.yaml)"
    if kind == "extra_forbidden":
        return loc, "unknown key", "remove it or fix its spelling (see harmless/cost/catalog_2017.yaml)"
    if kind in ("float_type", "int_type", "float_parsing", "int_parsing", "int_from_float"):
        want = "a whole number" if kind.startswith("int") else "a number"
        return loc, f"{value!r} is not {want}", "write a plain number, without currency signs, commas or quotes"
    if kind in ("model_type", "dict_type"):
        return loc, f"expected a mapping, got {value!r}", "see the layout of harmless/cost/catalog_2017.yaml"
    if kind in ("string_type",):
        return loc, f"{value!r} is not text", "quote it"
    ops = {"greater_than_equal": (">=", "ge"), "greater_than": (">", "gt"), "less_than_equal": ("<=", "le"),
           "less_than": ("<", "lt")}
    if kind in ops:
        sym, key = ops[kind]
        bound = (err.get("ctx") or {}).get(key)
        return loc, f"{value!r} is out of range: must be {sym} {bound}", "use a value in the allowed range"
    return loc, err["msg"].lower(), "use a value in the allowed range"


def parse_catalog(data: Any, path: str) -> Catalog:
    """Validate already-parsed catalog data.

    Args:
        data: the parsed YAML document.
        path: the file name used in error messages.

    Returns:
        The validated :class:`Catalog`.

    Raises:
        InputError: on a missing, unknown, non-numeric or negative field; *where* is
            ``<path>: <field.path>``.
    """
    if not isinstance(data, dict):
        raise InputError(path, "a catalog must be a YAML mapping", "start from harmless/cost/catalog_2017.yaml")
    try:
        cat = Catalog.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        loc, problem, fix = _describe(errors[0])
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise InputError(f"{path}: {loc}", problem + more, fix) from None
    return cat.model_copy(update={"path": path})


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate a catalog file.

    Args:
        path: a YAML file; ``None`` loads the default 2017 catalog of the paper.

    Returns:
        The validated :class:`Catalog` with ``path`` set.

    Raises:
        InputError: the file is missing, is not YAML, or a field is missing or invalid.
    """
    p = Path(path) if path is not None else DEFAULT_CATALOG_PATH
    shown = str(path) if path is not None else "catalog_2017.yaml (default)"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(shown, f"cannot read the catalog ({exc.strerror or exc})",
                         "give the path of an existing YAML file") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(shown, f"not valid YAML{at}", "fix the YAML syntax") from None
    cat = parse_catalog(data, shown)
    if path is None:
        cat = cat.model_copy(update={"path": f"{DEFAULT_CATALOG_PATH} (default)"})
    return cat
