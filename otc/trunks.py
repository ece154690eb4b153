"""Trunk interface type ``auto``: AF_XDP when it attaches, else AF_PACKET (issue #17).

A kernel trunk interface (a NIC or a veth) can join the userspace datapath two ways:

* ``afxdp`` (AF_XDP): OVS loads its XDP program (``xsk_def_prog``) on the interface and a PMD thread polls an
  AF_XDP socket; in driver ("native") mode frames skip the kernel's skb path. Measured here (``harmless bench
  --trunk``, ``bench/FINDINGS.md``) it carries several times what AF_PACKET does, at the price of one CPU core
  busy-polling (the PMD). ``xdp-mode=best-effort`` (OVS 3.1, ``ovs-vswitchd.conf.db(5)``, Interface
  ``options:xdp-mode``) tries native-with-zerocopy, native, then generic (skb) mode.
* ``system`` (AF_PACKET, ``type=""``): a socket system call per batch in ovs-vswitchd's main thread; works on
  every Ethernet interface.

For ``type: auto`` the translator tries AF_XDP (best-effort mode) and falls back to AF_PACKET when

1. another XDP program is already attached to the interface (a firewall, xdp-filter, a second OVS): OVS 3.1 cannot
   attach then (``could not add network device ... (Invalid argument)``) and HARMLESS must not replace it; or
2. OVS reports an interface error after the AF_XDP attempt (driver, kernel without AF_XDP sockets, missing
   capabilities, ...).

The choice is recorded on the OVSDB Interface (``external_ids:harmless-trunk-type`` and ``harmless-trunk-why``), so
a second ``up`` keeps an AF_XDP failure (no flapping between the types; a fallback because of another program is
tried again once that program is gone) and ``harmless status`` shows it with the XDP mode in use (``ip -d link``:
``xdp`` = native/driver mode, ``xdpgeneric`` = generic). ``auto`` never picks DPDK: a DPDK trunk needs the NIC
bound to a DPDK driver (``type: dpdk`` + ``devargs``), which takes it away from the kernel.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from harmless import procs
from harmless.errors import HarmlessError, OvsError
from harmless.ovs import Ovs
from harmless.plan import Plan, TrunkPlan

#: Interface ``external_ids`` keys: the type an ``auto`` trunk resolved to, and why
TYPE_KEY = "harmless-trunk-type"
WHY_KEY = "harmless-trunk-why"
#: how the reason of a fallback caused by someone else's XDP program starts
FOREIGN = "another XDP program"
#: why an ``auto`` trunk with egress-shaped ports runs AF_PACKET (docs/qos.md)
EGRESS_QOS = ("a port on it has egress shaping (qos.egress_mbps), which needs the kernel's queueing discipline; "
              "AF_XDP transmits bypass it")
#: the XDP program OVS 3.1 (libxdp) attaches for AF_XDP ports
OVS_XDP_PROG = "xsk_def_prog"
#: ``ip -j -d link`` ``xdp.mode`` values (include/uapi/linux/if_link.h, ``XDP_ATTACHED_*``)
XDP_MODES = {1: "native", 2: "generic", 3: "offload", 4: "multi"}


@dataclass(frozen=True)
class TrunkChoice:
    """What an ``auto`` trunk became.

    Attributes:
        interface: the server interface.
        type: ``afxdp`` or ``system``.
        why: one sentence: why this type (empty when AF_XDP attached).
        xdp_mode: ``native`` | ``generic`` | ``""`` (not AF_XDP or unknown).
    """

    interface: str
    type: str
    why: str = ""
    xdp_mode: str = ""

    def line(self) -> str:
        """The one line ``up`` prints."""
        if self.type == "afxdp":
            return (f"trunk {self.interface}: AF_XDP ({self.xdp_mode or 'mode unknown'} XDP mode), "
                    "the fastest kernel-interface trunk type")
        return f"trunk {self.interface}: AF_PACKET (type system) because {self.why}"


def interface_settings(t: TrunkPlan, resolved: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """OVS ``Interface`` type and options for trunk ``t``. Pure.

    Args:
        t: the planned trunk (``t.type`` may be ``auto``).
        resolved: ``{interface: "system"}`` for ``auto`` trunks that must be AF_PACKET (a foreign XDP program,
            or an earlier fallback recorded in OVSDB); others try AF_XDP.

    Returns:
        ``(type, options)``; ``type`` is ``""`` for system (ovs-vsctl syntax).
    """
    if t.type != "auto":
        return ('""' if t.type == "system" else t.type), t.options
    if resolved.get(t.server_interface) == "system":
        return '""', ()
    return "afxdp", (("xdp-mode", "best-effort"),)


def xdp_program(ovs: Ovs, iface: str) -> dict | None:
    """The XDP program attached to ``iface`` in OVS's namespace: ``{"name", "id", "mode"}`` or None.

    Raises nothing: an interface that cannot be read counts as "none" (OVS reports it missing later).
    """
    argv = ["ip", *(["-n", ovs.netns] if ovs.netns else []), "-j", "-d", "link", "show", "dev", iface]
    try:
        p = procs.run(argv, timeout=15, check=False)
        rows = json.loads(p.stdout or "[]") if p.returncode == 0 else []
    except (HarmlessError, ValueError):      # not installed, timed out, not JSON
        return None
    return parse_xdp(rows[0] if rows else {})


def parse_xdp(link: dict) -> dict | None:
    """The ``xdp`` part of one ``ip -j -d link show`` row as ``{"name", "id", "mode"}`` (None: none). Pure."""
    x = link.get("xdp") or {}
    prog = x.get("prog") or next((a.get("prog") for a in x.get("attached") or [] if a.get("prog")), None)
    if not prog:
        return None
    return {"name": prog.get("name", ""), "id": prog.get("id"), "mode": XDP_MODES.get(x.get("mode"), "")}


def _rows(ovs: Ovs) -> dict[str, dict]:
    return {r["name"]: r for r in ovs.vsctl_json("Interface", columns=["name", "type", "error", "ofport",
                                                                       "external_ids"])}


def shaped(sp, t: TrunkPlan) -> bool:
    """True when a port of switch plan ``sp`` carried by trunk ``t`` has egress QoS (it needs AF_PACKET). Pure."""
    return any(p.trunk == t.switch_port and getattr(p, "qos", None) is not None and p.qos.egress_mbps is not None
               for p in sp.ports)


def preselect(ovs: Ovs, plan: Plan) -> dict[str, str]:
    """Before the OVSDB transaction: which ``auto`` trunks must be AF_PACKET from the start.

    Returns:
        ``{interface: "system"}`` for trunks recorded as fallen back (``external_ids:harmless-trunk-type=system``)
        for trunks with a foreign XDP program (not an AF_XDP port of this OVS already), and for trunks carrying a
        port with egress QoS (:func:`shaped`).
    """
    rows = _rows(ovs)
    out = {}
    for sp in plan.switches:
        for t in sp.trunks:
            if t.type != "auto":
                continue
            if shaped(sp, t):
                out[t.server_interface] = "system"
                continue
            r = rows.get(t.server_interface)
            ext = (r or {}).get("external_ids") or {}
            foreign = not (r and r.get("type") == "afxdp") and xdp_program(ovs, t.server_interface)
            if foreign:
                out[t.server_interface] = "system"
            elif ext.get(TYPE_KEY) == "system" and not (ext.get(WHY_KEY, "").startswith(FOREIGN)
                                                        or ext.get(WHY_KEY) == EGRESS_QOS):
                out[t.server_interface] = "system"     # AF_XDP failed before: do not flap (the other program's
                #                                        removal, by contrast, lets the next up try AF_XDP again)
    return out


def settle(ovs: Ovs, plan: Plan, before: dict[str, str], timeout: float = 10.0) -> list[TrunkChoice]:
    """After the transaction: fall back to AF_PACKET where AF_XDP did not attach; record every choice in OVSDB.

    Args:
        before: what :func:`preselect` returned (computed before the transaction, with the foreign programs).

    Returns:
        one :class:`TrunkChoice` per ``auto`` trunk, in plan order.

    Raises:
        OvsError: the fallback transaction failed.
    """
    autos = [t for sp in plan.switches for t in sp.trunks if t.type == "auto"]
    if not autos:
        return []
    forced = _forced_system(ovs, plan, autos, before)
    rows = _wait_attached(ovs, autos, forced, timeout)
    out, cmds = [], []
    for t in autos:
        choice, c = _choose(ovs, t.server_interface, rows.get(t.server_interface) or {}, forced)
        out.append(choice)
        cmds += c
    ovs.transact(cmds, timeout=60)
    for c in out:
        if c.type == "system":
            r = _rows(ovs).get(c.interface) or {}
            if r.get("error"):
                raise OvsError(c.interface, f"neither AF_XDP nor AF_PACKET works: {r['error']}",
                               "check the interface (ip link) and the ovs-vswitchd log")
    return out


def _forced_system(ovs: Ovs, plan: Plan, autos: list[TrunkPlan], before: dict[str, str]) -> dict[str, str]:
    """``{interface: why}`` of the ``auto`` trunks that are AF_PACKET whatever happens: egress-shaped ones
    (:data:`EGRESS_QOS`) and those :func:`preselect` put on AF_PACKET (the recorded reason, else the foreign XDP
    program attached to it)."""
    rows = _rows(ovs)
    shaped_ifaces = {t.server_interface for sp in plan.switches for t in sp.trunks
                     if t.type == "auto" and shaped(sp, t)}
    forced = {}
    for t in autos:
        ext = (rows.get(t.server_interface) or {}).get("external_ids") or {}
        if t.server_interface in shaped_ifaces:
            forced[t.server_interface] = EGRESS_QOS
        elif before.get(t.server_interface) == "system":
            prog = xdp_program(ovs, t.server_interface)
            forced[t.server_interface] = (ext.get(WHY_KEY) if ext.get(TYPE_KEY) == "system" and ext.get(WHY_KEY)
                                          else f"{FOREIGN} ({prog['name'] if prog else '?'}, id "
                                               f"{prog['id'] if prog else '?'}) is attached to it and AF_XDP would "
                                               "have to replace it")
    return forced


def _wait_attached(ovs: Ovs, autos: list[TrunkPlan], forced: dict[str, str], timeout: float) -> dict[str, dict]:
    """Interface rows once every AF_XDP attempt has an OpenFlow port or an error (OVS reports an AF_XDP attach
    failure as the Interface's error shortly after the transaction), at most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        rows = _rows(ovs)
        pending = [t for t in autos if t.server_interface not in forced
                   and not (rows.get(t.server_interface) or {}).get("error")
                   and (rows.get(t.server_interface) or {}).get("ofport") in (None, [], -1)]
        if not pending or time.monotonic() > end:
            return rows
        time.sleep(0.1)


def _choose(ovs: Ovs, name: str, r: dict, forced: dict[str, str]) -> tuple[TrunkChoice, list[list[str]]]:
    """What ``auto`` trunk ``name`` (Interface row ``r``) is, and the ovs-vsctl commands recording it (and falling
    back to AF_PACKET when AF_XDP reported an error). Reasons go into OVSDB inside double quotes."""
    if name in forced:
        why = forced[name]
        return TrunkChoice(name, "system", why), [
            ["set", "Interface", name, f"external_ids:{TYPE_KEY}=system", f'external_ids:{WHY_KEY}="{why}"']]
    if r.get("error"):
        why = f"AF_XDP did not attach ({r['error']})".replace('"', "'").replace("\\", "/")
        return TrunkChoice(name, "system", why), [
            ["set", "Interface", name, 'type=""', f"external_ids:{TYPE_KEY}=system", f'external_ids:{WHY_KEY}="{why}"'],
            ["remove", "Interface", name, "options", "xdp-mode"]]
    prog = xdp_program(ovs, name)
    return TrunkChoice(name, "afxdp", "", (prog or {}).get("mode", "")), [
        ["set", "Interface", name, f"external_ids:{TYPE_KEY}=afxdp"],
        ["remove", "Interface", name, "external_ids", WHY_KEY]]


def describe(ovs: Ovs, iface: str, row: dict) -> dict:
    """``harmless status`` fields of one trunk: ``type`` (OVS type, ``system`` for ""), ``xdp_mode``, ``why``."""
    ext = row.get("external_ids") or {}
    typ = row.get("type") or "system"
    prog = xdp_program(ovs, iface) if typ == "afxdp" else None
    return {"type": typ, "xdp_mode": (prog or {}).get("mode", ""), "auto": TYPE_KEY in ext,
            "why": ext.get(WHY_KEY, "")}
