"""The inventory's per-port ``qos:`` field and the QoS a plan carries for one migrated access port.

Inventory shape (every key optional, at least one rate)::

    access_ports:
    - interface: FastEthernet0/7
      qos: {ingress_mbps: 20, ingress_burst_kb: 2000, egress_mbps: 50, egress_burst_kb: 400, scheduler: htb}

Directions are seen from the legacy port's host: **ingress** = what the host sends (legacy port -> trunk -> br-otc ->
br-of), policed by an OpenFlow meter on the translator's ``pop_vlan`` flow of the port's VID; **egress** = what the
host receives (br-of -> br-otc -> trunk -> legacy port), shaped by a queue on the trunk selected by ``set_queue`` in
the translator's ``push_vlan`` flow. Units: rates in Mbit/s (10^6 bit/s), bursts in kilobits (10^3 bit, the unit of
OVS's ``ingress_policing_burst`` and of OpenFlow meter ``burst_size`` with ``kbps``, OpenFlow 1.3 §7.3.4.5).

What each trunk type supports (``docs/qos.md``): ``system`` ingress meter, egress ``linux-htb``/``linux-hfsc``;
``afxdp`` ingress meter only (AF_XDP transmits bypass the kernel qdisc); ``dpdk``/``dpdkvhostuserclient`` ingress
meter, egress ``trtcm-policer`` queues (policing, no scheduler).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harmless.errors import InputError

#: largest rate accepted (Mbit/s): 100 Gbit/s, above any trunk HARMLESS sizes (paper: 10G trunks)
MAX_MBPS = 100_000
#: smallest burst (kbit): one 1500-byte frame (12 kbit); a smaller bucket never passes a full-size frame
MIN_BURST_KB = 12
#: largest burst (kbit): 1 Gbit, 10 s at 100 Mbit/s
MAX_BURST_KB = 1_000_000
#: default ingress burst as time at the configured rate (s): 300 ms, so that a TCP sender's window fits in the
#: bucket at the RTTs of a LAN hairpin; how it was chosen (measured): docs/qos.md, "Bursts"
INGRESS_BURST_S = 0.3
#: default egress queue burst as time at the configured rate (s): 10 ms. With OVS's default (about one MTU) TCP's
#: line-rate micro-bursts throttle the HTB class on nearly every frame, which tripled ovs-vswitchd's CPU at 40 Mbit/s
#: through a 100 Mbit/s queue; 10 ms brought it back to the unshaped figure and kept shaping within 0.96 of the rate
#: (measured, docs/qos.md "Bursts")
EGRESS_BURST_S = 0.01
#: trunk types and the egress mechanism each has (None: egress QoS cannot be enforced there); ``auto`` runs AF_PACKET
#: when a port on it has egress QoS (:func:`harmless.otc.trunks.preselect`)
EGRESS_BY_TRUNK = {"system": "linux", "auto": "linux", "afxdp": None, "dpdk": "trtcm-policer",
                   "dpdkvhostuserclient": "trtcm-policer"}
#: trunk types whose egress is shaped by a kernel qdisc
KERNEL_QDISC_TRUNKS = tuple(t for t, mech in EGRESS_BY_TRUNK.items() if mech == "linux")


class QosSettings(BaseModel):
    """Inventory ``access_ports[].qos`` (see the module doc for units and directions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ingress_mbps: float | None = Field(None, gt=0, le=MAX_MBPS, description="police what the host sends (Mbit/s)")
    ingress_burst_kb: int | None = Field(None, ge=MIN_BURST_KB, le=MAX_BURST_KB,
                                         description="meter bucket (kbit); default 300 ms at ingress_mbps")
    egress_mbps: float | None = Field(None, gt=0, le=MAX_MBPS, description="shape what the host receives (Mbit/s)")
    egress_burst_kb: int | None = Field(None, ge=MIN_BURST_KB, le=MAX_BURST_KB,
                                        description="queue burst (kbit); default 10 ms at egress_mbps")
    scheduler: Literal["htb", "hfsc"] | None = Field(None, description="egress scheduler on kernel trunks "
                                                     "(default htb)")

    @model_validator(mode="after")
    def _consistent(self):
        if self.ingress_mbps is None and self.egress_mbps is None:
            raise ValueError("qos needs ingress_mbps or egress_mbps (or remove qos)")
        if self.ingress_burst_kb is not None and self.ingress_mbps is None:
            raise ValueError("ingress_burst_kb without ingress_mbps: set the rate too, or drop the burst")
        if self.egress_burst_kb is not None and self.egress_mbps is None:
            raise ValueError("egress_burst_kb without egress_mbps: set the rate too, or drop the burst")
        if self.scheduler is not None and self.egress_mbps is None:
            raise ValueError("scheduler applies to egress only: set egress_mbps too, or drop scheduler")
        return self


@dataclass(frozen=True)
class PortQos:
    """The QoS of one migrated port as planned and applied (JSON-able through ``dataclasses.asdict``).

    Attributes:
        ingress_mbps: meter rate (Mbit/s) or None.
        ingress_burst_kb: meter burst (kbit) or None (then :data:`INGRESS_BURST_S` at the rate).
        egress_mbps: queue max-rate (Mbit/s) or None.
        egress_burst_kb: queue burst (kbit) or None (then :data:`EGRESS_BURST_S` at the rate).
        scheduler: ``htb`` or ``hfsc`` (kernel trunks).
    """

    ingress_mbps: float | None = None
    ingress_burst_kb: int | None = None
    egress_mbps: float | None = None
    egress_burst_kb: int | None = None
    scheduler: str = "htb"

    @staticmethod
    def from_settings(q: QosSettings | None) -> "PortQos | None":
        """The plan's QoS of an inventory ``qos:`` (None stays None)."""
        if q is None:
            return None
        return PortQos(q.ingress_mbps, q.ingress_burst_kb, q.egress_mbps, q.egress_burst_kb, q.scheduler or "htb")

    @staticmethod
    def from_dict(d: dict | None) -> "PortQos | None":
        """Inverse of ``dataclasses.asdict`` (state files); None/empty -> None."""
        return PortQos(**d) if d else None

    @property
    def meter_kbps(self) -> int | None:
        """Meter rate in kbit/s (OpenFlow meter ``kbps`` unit), None without ingress."""
        return None if self.ingress_mbps is None else max(1, round(self.ingress_mbps * 1000))

    @property
    def meter_burst_kb(self) -> int | None:
        """Meter burst in kbit: the configured one, else :data:`INGRESS_BURST_S` at the rate (at least one frame)."""
        if self.ingress_mbps is None:
            return None
        if self.ingress_burst_kb is not None:
            return self.ingress_burst_kb
        return max(MIN_BURST_KB, round(self.ingress_mbps * 1000 * INGRESS_BURST_S))

    @property
    def egress_bps(self) -> int | None:
        """Queue rate in bit/s (OVS Queue ``other_config:max-rate`` unit), None without egress."""
        return None if self.egress_mbps is None else round(self.egress_mbps * 1_000_000)

    @property
    def queue_burst_kb(self) -> int | None:
        """Queue burst in kbit: the configured one, else :data:`EGRESS_BURST_S` at the rate (at least one frame)."""
        if self.egress_mbps is None:
            return None
        if self.egress_burst_kb is not None:
            return self.egress_burst_kb
        return max(MIN_BURST_KB, round(self.egress_mbps * 1000 * EGRESS_BURST_S))

    def describe(self) -> str:
        """One line, e.g. ``ingress 20 Mbit/s (burst 2000 kbit), egress 50 Mbit/s htb``."""
        parts = []
        if self.ingress_mbps is not None:
            parts.append(f"ingress {self.ingress_mbps:g} Mbit/s (burst {self.meter_burst_kb} kbit)")
        if self.egress_mbps is not None:
            parts.append(f"egress {self.egress_mbps:g} Mbit/s {self.scheduler} (burst {self.queue_burst_kb} kbit)")
        return ", ".join(parts) or "none"


def trunk_problem(trunk_type: str, q: PortQos | QosSettings, scheduler_given: bool) -> tuple[str, str, str] | None:
    """What a trunk of ``trunk_type`` cannot do of ``q``: ``(field, problem, fix)`` or None. Pure.

    Args:
        trunk_type: ``system``, ``afxdp``, ``dpdk`` or ``dpdkvhostuserclient`` (inventory ``trunks[].type``).
        q: the port's QoS.
        scheduler_given: whether a scheduler was chosen explicitly (DPDK trunks police, they have none).
    """
    mech = EGRESS_BY_TRUNK.get(trunk_type)
    if q.egress_mbps is None:
        return None
    if mech is None:
        return ("egress_mbps", f"a {trunk_type} trunk cannot shape egress (AF_XDP transmits bypass the kernel's "
                "queueing discipline)", "use a trunk of type system (kernel qdisc) or dpdk, or drop egress_mbps")
    if mech == "trtcm-policer" and scheduler_given:
        return ("scheduler", f"a {trunk_type} trunk polices egress with OVS-DPDK's trtcm-policer (no htb/hfsc "
                "scheduler)", "drop scheduler")
    return None


def check_inventory(inv, src: str) -> None:
    """Refuse per-port QoS a port's trunk type cannot enforce (the inventory's cross-field check for ``qos:``).

    Args:
        inv: a validated :class:`harmless.inventory.Inventory`.
        src: file name for messages.

    Raises:
        InputError: one line naming ``switches[i].access_ports[j].qos.<field>`` and the fix.
    """
    for i, sw in enumerate(inv.switches):
        trunks = {sw.canonical(t.switch_port): t for t in sw.trunks}
        schedulers: dict[str, tuple[str, int]] = {}      # one QoS row per trunk: one scheduler
        for j, p in enumerate(sw.access_ports):
            q = getattr(p, "qos", None)
            if q is None:
                continue
            t = trunks.get(sw.canonical(p.trunk)) if p.trunk else sw.trunks[0]
            if t is None:
                continue        # an unknown trunk: reported by the trunk check
            bad = trunk_problem(t.type, q, q.scheduler is not None)
            if bad:
                raise InputError(f"{src}: switches[{i}].access_ports[{j}].qos.{bad[0]}", bad[1], bad[2])
            if q.egress_mbps is not None and t.type in KERNEL_QDISC_TRUNKS:
                mine = q.scheduler or "htb"
                other = schedulers.setdefault(t.server_interface, (mine, j))
                if other[0] != mine:
                    raise InputError(f"{src}: switches[{i}].access_ports[{j}].qos.scheduler",
                                     f"access_ports[{other[1]}] on the same trunk uses {other[0]} (one scheduler "
                                     "per trunk)", f"use scheduler: {other[0]} here too")


def uses_hfsc(inv) -> bool:
    """Whether any port of the inventory shapes egress with HFSC (a kernel feature ``up`` checks first)."""
    return any(getattr(p, "qos", None) is not None and p.qos.scheduler == "hfsc" and p.qos.egress_mbps is not None
               for sw in inv.switches for p in sw.access_ports)
