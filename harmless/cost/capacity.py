"""HARMLESS CAPEX with a measured server capacity instead of the paper's assumption (issue #17). Pure.

The paper (Sec. III.B) sizes a HARMLESS server by its NIC slots: 12 trunks of k access ports each at 1G (3 X710
4x10G NICs, 12k = 144 ports), 6 trunks at 10G (3 XL710 2x40G, 6k = 72 ports), and assumes the server forwards all
of it. ``harmless bench --sizing`` measures what a server actually forwards on the HARMLESS path (Gbit/s at IMIX);
here the ports per server become ``min(NIC slots, floor(measured Gbit/s / (port speed x load)))``
(:func:`access_ports`, which ``harmless bench --sizing`` uses too), and each server is priced as the paper prices
a HARMLESS server for its ports (:func:`harmless.cost.models.harmless_items`: its NICs and, past two NICs, its
second CPU). Spare servers you own count as zero CAPEX and legacy switches as the paper's model says
(:class:`harmless.cost.models.Owned`). With a capacity above the NIC slots the result equals the paper's ``C_HL``.
"""
from __future__ import annotations

import math
from dataclasses import replace

from harmless.cost import models as m
from harmless.cost.catalog import Catalog
from harmless.errors import InputError


#: access port speeds in Gbit/s
PORT_SPEEDS = {"1G": 1.0, "10G": 10.0}


def access_ports(gbps: float, speed_gbps: float, load: float) -> int:
    """Access ports of ``speed_gbps`` at average ``load`` (0..1] that ``gbps`` of server capacity carries."""
    if gbps <= 0 or speed_gbps <= 0 or not 0 < load <= 1:
        return 0
    return math.floor(gbps / (speed_gbps * load) + 1e-9)


def measured_harmless(x: int, speed: str, cat: Catalog, server_gbps: float, load: float = 1.0,
                      owned: m.Owned = m.PAPER_OWNED, source: str = "") -> dict:
    """CAPEX of HARMLESS for ``x`` access ports when one server forwards ``server_gbps``.

    Args:
        x: access ports (>= 1).
        speed: ``1G`` or ``10G``.
        cat: price catalog.
        server_gbps: measured HARMLESS forwarding capacity of one server, Gbit/s (IMIX; finite, > 0).
        load: average load of an access port, fraction of its speed (0 < load <= 1; the paper: 1).
        owned: spare servers and legacy switches already owned (Sec. III.B).
        source: where ``server_gbps`` came from (printed with the result).

    Returns:
        ``{"capex", "per_port", "servers", "ports_per_server", "limited_by", "nics", "items", "server_gbps",
        "load", "source"}`` (USD; ``items``: the bill of materials).

    Raises:
        InputError: a capacity that is not a finite positive number, load outside (0, 1], or a server that carries
            no port at that load.
    """
    if not (math.isfinite(server_gbps) and server_gbps > 0):
        raise InputError("--server-gbps", f"must be a finite number > 0, got {server_gbps}",
                         "give the measured Gbit/s, e.g. 4.5")
    if not 0 < load <= 1:
        raise InputError("--load", f"must be within (0, 100] %, got {load * 100:g}", "e.g. --load 30")
    k = cat.harmless.access_ports_per_trunk
    slots = 12 * k if speed == "1G" else 6 * k
    by_cpu = access_ports(server_gbps, PORT_SPEEDS[speed], load)
    if by_cpu < 1:
        raise InputError("--server-gbps", f"{server_gbps:g} Gbit/s carries no {speed} port at {load * 100:g} % load",
                         "lower --load, or measure a faster trunk type (harmless bench --sizing)")
    per_server = min(slots, by_cpu)
    servers = math.ceil(x / per_server)
    loads = [per_server] * (servers - 1) + [x - per_server * (servers - 1)]
    bare = replace(owned, spare_servers=0, legacy_switches=None)     # owned parts are counted once, below
    items: list[m.LineItem] = []
    for n in loads:
        items += m.harmless_items(n, speed, cat, bare)
    # legacy switches to buy (the paper's rule for x ports) and owned servers (at most one per server needed)
    items += [i for i in m.harmless_items(x, speed, cat, replace(owned, spare_servers=0))
              if i.price_key.startswith("legacy_switch")]
    items += m.spare_servers_items(servers, owned, cat)
    rows = {}
    for i in items:                                                  # one line per item
        r = rows.setdefault(i.item, {"item": i.item, "qty": 0, "price_key": i.price_key, "unit": i.unit})
        r["qty"] += i.qty
    for r in rows.values():
        r["total"] = r["qty"] * r["unit"]
    total = sum(r["total"] for r in rows.values())
    nics = sum(r["qty"] for r in rows.values() if "NIC" in r["item"])
    return {"capex": round(total, 2), "per_port": round(total / x, 2), "servers": servers,
            "ports_per_server": per_server,
            "limited_by": "measured capacity" if by_cpu < slots else "NIC slots (paper, Sec. III.B)",
            "nics": nics, "items": list(rows.values()), "server_gbps": server_gbps, "load": load, "source": source}
