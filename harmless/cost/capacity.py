"""HARMLESS CAPEX with a measured server capacity instead of the paper's assumption (issue #17). Pure.

The paper (Sec. III.B) sizes a HARMLESS server by its NIC slots: 12 trunks of k access ports each at 1G (3 X710
4x10G NICs, 12k = 144 ports), 6 trunks at 10G (3 XL710 2x40G, 6k = 72 ports), and assumes the server forwards all
of it. ``harmless bench --sizing`` measures what a server actually forwards on the HARMLESS path (Gbit/s at IMIX);
here the ports per server become ``min(NIC slots, floor(measured Gbit/s / (port speed x load)))``. A server holds one
CPU (the measured figure is of the server as it is; no second CPU is added), and NICs as the paper counts them, at
least one per server. Spare servers you own count as zero CAPEX (Sec. III.B), as in the paper's model.
"""
from __future__ import annotations

import math

from harmless.cost.catalog import Catalog
from harmless.errors import InputError

SPEED_GBPS = {"1G": 1.0, "10G": 10.0}


def measured_harmless(x: int, speed: str, cat: Catalog, server_gbps: float, load: float = 1.0,
                      spare_servers: int = 0, source: str = "") -> dict:
    """CAPEX of HARMLESS for ``x`` access ports when one server forwards ``server_gbps``.

    Args:
        x: access ports (>= 1).
        speed: ``1G`` or ``10G``.
        cat: price catalog (``server_usd``, ``nic_4x10g_usd`` / ``nic_2x40g_usd``, ``access_ports_per_trunk``).
        server_gbps: measured HARMLESS forwarding capacity of one server, Gbit/s (IMIX).
        load: average load of an access port, fraction of its speed (0 < load <= 1; the paper: 1).
        spare_servers: servers already owned (zero CAPEX).
        source: where ``server_gbps`` came from (printed with the result).

    Returns:
        ``{"capex", "per_port", "servers", "ports_per_server", "limited_by", "nics", "items", "server_gbps",
        "load", "source"}``.

    Raises:
        InputError: non-positive capacity, load outside (0, 1], or a server that carries no port at that load.
    """
    if not server_gbps > 0:
        raise InputError("--server-gbps", f"must be > 0, got {server_gbps}", "give the measured Gbit/s, e.g. 4.5")
    if not 0 < load <= 1:
        raise InputError("--load", f"must be within (0, 100] %, got {load * 100:g}", "e.g. --load 30")
    k = cat.harmless.access_ports_per_trunk
    sp = SPEED_GBPS[speed]
    slots = 12 * k if speed == "1G" else 6 * k
    by_cpu = math.floor(server_gbps / (sp * load) + 1e-9)
    if by_cpu < 1:
        raise InputError("--server-gbps", f"{server_gbps:g} Gbit/s carries no {speed} port at {load * 100:g} % load",
                         "lower --load, or measure a faster trunk type (harmless bench --sizing)")
    per_server = min(slots, by_cpu)
    servers = math.ceil(x / per_server)
    if speed == "1G":
        nic_key, nics = "nic_4x10g_usd", max(math.ceil(x / (4 * k)), servers)
    else:
        nic_key, nics = "nic_2x40g_usd", max(math.ceil(x / (2 * k)), servers)
    p = cat.prices
    spare = min(max(spare_servers, 0), servers)
    items = [{"item": "HARMLESS servers (1 CPU)", "qty": servers, "price_key": "server_usd", "unit": p.server_usd,
              "total": servers * p.server_usd},
             {"item": "trunk NICs", "qty": nics, "price_key": nic_key, "unit": getattr(p, nic_key),
              "total": nics * getattr(p, nic_key)}]
    if spare:
        items.append({"item": "servers already owned (Sec. III.B: zero CAPEX)", "qty": -spare,
                      "price_key": "server_usd", "unit": p.server_usd, "total": -spare * p.server_usd})
    total = sum(i["total"] for i in items)
    return {"capex": round(total, 2), "per_port": round(total / x, 2), "servers": servers,
            "ports_per_server": per_server,
            "limited_by": "measured capacity" if by_cpu < slots else "NIC slots (paper, Sec. III.B)",
            "nics": nics, "items": items, "server_gbps": server_gbps, "load": load, "source": source}
