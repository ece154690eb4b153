"""Is the switch still what HARMLESS deployed on it? The device's port model compared with the deployed plan (pure).

``harmless status``, ``harmless watch`` and the exporter all call :func:`check` (one function, so the three never
disagree): the device's per-port facts (:meth:`harmless.switch_drivers.base.SwitchDriver.port_model`, the
vendor-independent :class:`~harmless.switch_drivers.portmodel.SwitchModel` every driver reads from its running
config) against the :class:`~harmless.plan.SwitchPlan` in ``state.json``. What it reports (:class:`Difference`):

``not-migrated``
    no migrated port is in its HARMLESS VLAN and no VLAN carries HARMLESS's name: the switch runs without the
    migration, e.g. it reloaded from a startup config that does not have it (a replaced or restored startup config,
    an RMA unit loaded with an old backup). Every migrated port's traffic bypasses br-of.
``port``
    a migrated port is no longer an access port (a QinQ port: ``dot1q-tunnel``) of its own VLAN, e.g. moved back to
    VLAN 1 by hand: its traffic no longer reaches its br-of port.
``trunk``
    a HARMLESS trunk is no longer a trunk, no longer carries some of the migrated ports' VLANs, is shut down, or has
    a HARMLESS VLAN as its native (untagged) VLAN: those ports' traffic no longer reaches the server.
``held``
    (when the link states are given) a br-of port ``harmless watch`` holds LINK_DOWN although the legacy port's
    link is up: a watch that stopped while holding it (``harmless watch --once`` mirrors it now).

A real device is the reference for what is read: the running config (a reload replaces it with the startup config:
Cisco IOS Configuration Fundamentals, "Managing Configuration Files"; Arista EOS User Manual, "Boot configuration
/ startup-config"), parsed by the same port model as ``harmless ports``.

Layer: plan-level checks (beside :mod:`harmless.health`); nothing here reads a device or changes anything.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from harmless.plan import PortPlan, SwitchPlan
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel


class Difference(BaseModel):
    """One way a switch differs from what HARMLESS deployed on it.

    Attributes:
        switch: the switch's name in the deployment.
        kind: ``not-migrated``, ``port``, ``trunk`` or ``held`` (module doc).
        interface: the port concerned (None for ``not-migrated``).
        expected: what HARMLESS left there (``access VLAN 107``), short.
        found: what the device has now (``access VLAN 1``), short.
        problem: one sentence: what is wrong and what it breaks.
        fix: what to type.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    switch: str
    kind: Literal["not-migrated", "port", "trunk", "held"]
    interface: str | None = None
    expected: str
    found: str
    problem: str
    fix: str

    def line(self) -> str:
        """``<switch>: <problem> (fix: <fix>)``: the one line ``status``, ``watch`` and the exporter's log print."""
        return f"{self.switch}: {self.problem} (fix: {self.fix})"


def _describe(p: PortInfo | None) -> str:
    """A port as one short phrase (``an access port of VLAN 1``, ``a trunk (native 1, allowed 107,110)``)."""
    if p is None:
        return "not on the switch"
    down = ", shut down" if p.shutdown else ""
    if p.mode in ("access", "dynamic", "dot1q-tunnel"):
        return f"{'an' if p.mode == 'access' else 'a'} {p.mode} port of VLAN {p.access_vid}{down}"
    if p.mode == "trunk":
        allowed = p.allowed_vids if isinstance(p.allowed_vids, str) else ",".join(map(str, p.allowed_vids or ()))
        return f"a trunk (native {p.native_vid}, allowed {allowed or 'none'}{down})"
    return f"a {p.mode} port{down}"


def _port_as_deployed(pp: PortPlan, p: PortInfo | None) -> bool:
    """The migrated port is still an access (QinQ: dot1q-tunnel) port of its own VLAN."""
    return p is not None and p.mode == ("dot1q-tunnel" if pp.qinq else "access") and p.access_vid == pp.vid


def _trunk_problems(vids: tuple[int, ...], p: PortInfo | None) -> list[str]:
    """What breaks a HARMLESS trunk that should carry ``vids`` on the device (empty: it still carries them)."""
    if p is None:
        return ["is no longer on the switch"]
    if p.mode != "trunk":
        return [f"is no longer a trunk ({_describe(p)})"]
    out = []
    if p.allowed_vids != "all":
        missing = sorted(set(vids) - set(p.allowed_vids or ()))
        if missing:
            out.append(f"no longer carries VLAN(s) {','.join(map(str, missing))}")
    if p.native_vid in vids:
        out.append(f"has HARMLESS VLAN {p.native_vid} as its native VLAN (its frames leave untagged)")
    if p.shutdown:
        out.append("is shut down")
    return out


def check(sp: SwitchPlan, model: SwitchModel, inventory: str, links: dict[str, str] | None = None,
          held: set[int] | None = None) -> list[Difference]:
    """How the switch differs from its deployed plan (empty: as deployed). Pure.

    Args:
        sp: the switch's deployed plan.
        model: the device's port model now (its running config).
        inventory: the deployment's inventory file, for the fix lines (``harmless up -i <inventory>``).
        links: ``{interface: "up" | "down" | "admin-down"}`` from the device, with ``held`` (the OpenFlow port
            numbers ``watch`` holds LINK_DOWN on br-of) to report stale holds; None: not checked.

    Returns:
        One :class:`Difference` per difference; a switch that runs without the migration at all is one
        ``not-migrated`` finding (not one per port).
    """
    again = f"harmless up -i {inventory} puts HARMLESS's configuration back; harmless down gives the switch its " \
            "original configuration and removes the bridges"
    off = [pp for pp in sp.ports if not _port_as_deployed(pp, model.port(pp.interface))]
    named = any(model.vlan_names.get(pp.vid) == pp.vlan_name for pp in sp.ports)
    if sp.ports and len(off) == len(sp.ports) and not named:
        return [Difference(switch=sp.name, kind="not-migrated", expected=f"{len(sp.ports)} migrated ports",
                        found="no port in its HARMLESS VLAN, no HARMLESS VLAN",
                        problem="the switch runs without HARMLESS's configuration (reloaded from a startup config "
                                "without it?): no migrated port reaches br-of", fix=again)]
    out = []
    for pp in off:
        p = model.port(pp.interface)
        want = f"{'dot1q-tunnel' if pp.qinq else 'access'} port of VLAN {pp.vid}"
        out.append(Difference(switch=sp.name, kind="port", interface=pp.interface, expected=want, found=_describe(p),
                           problem=f"{pp.interface} is {_describe(p)}, not HARMLESS's {want}: its traffic no longer "
                                   f"reaches br-of port {pp.ofport}",
                           fix=again + f"; to take the port out of HARMLESS, remove {pp.interface} from the "
                                       "inventory and run harmless up"))
    for t in sp.trunk_changes():      # with an active/standby pair: the trunk that forwards and the idle one
        p = model.port(t.interface)
        for problem in _trunk_problems(t.vids, p):
            out.append(Difference(switch=sp.name, kind="trunk", interface=t.interface,
                               expected=f"trunk carrying {','.join(map(str, t.vids))}", found=_describe(p),
                               problem=f"{t.interface} (a HARMLESS trunk) {problem}: migrated ports behind it no "
                                       "longer reach the server", fix=again))
    return out + stale_holds(sp, links, held)


def stale_holds(sp: SwitchPlan, links: dict[str, str] | None, held: set[int] | None) -> list[Difference]:
    """br-of ports held LINK_DOWN by ``harmless watch`` whose legacy link is up (a watch that stopped while holding
    them; part of :func:`check`). Pure; empty when ``links`` or ``held`` is None."""
    if links is None or held is None:
        return []
    return [Difference(switch=sp.name, kind="held", interface=pp.interface, expected="LIVE on br-of (link up)",
                    found="LINK_DOWN on br-of",
                    problem=f"br-of port {pp.ofport} is held LINK_DOWN although {pp.interface}'s link is up (a "
                            "harmless watch stopped while holding it?)",
                    fix="harmless watch --once mirrors the links now (harmless up does too); keep harmless watch "
                        "running (systemctl start harmless-watch)")
            for pp in sp.ports if pp.ofport in held and links.get(pp.interface) == "up"]
