"""A standby's fencing candidates, loaded onto the switches ahead of a take-over (docs/high-availability.md).

On a switch whose driver can stage (:attr:`harmless.switch_drivers.base.SwitchDriver.can_stage`: IOS, where loading
a candidate means copying it onto ``flash:`` line by line and takes most of a fencing commit), the standby's agent
keeps a session open with the candidate of its take-over loaded (:meth:`~harmless.switch_drivers.base.SwitchDriver.
stage`), so that the take-over is only the commit. The candidate is loaded again when the plan changes, and the
session is checked (the trunks read through it) at every audit; a staged candidate that cannot be used is dropped and
the take-over loads its own. Nothing is committed here: a staged candidate changes nothing on the device until a
take-over commits it.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace

from harmless.deployment import connect_deployed
from harmless.errors import HarmlessError
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.base import SwitchDriver


@dataclass
class Staged:
    """One switch's staged take-over: the open session, the plan it was made for, the diff the device reported."""

    drv: SwitchDriver
    key: str
    diff: str


def candidate_key(sp: SwitchPlan) -> str:
    """What a staged candidate depends on: the ports and trunks of the take-over (a hash). Pure."""
    active = replace(sp, standby=False)
    text = repr((active.access_changes(), active.trunk_changes()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Stager:
    """The staged take-overs of this server (thread-safe: the agent's audit refreshes, a take-over takes)."""

    def __init__(self, say=lambda m: None):
        self.say = say
        self._staged: dict[str, Staged] = {}
        self._lock = threading.Lock()

    def refresh(self, s: DeploymentState, plan: Plan) -> None:
        """Stage (or check) every switch this server is standby of and whose driver can; drop the rest."""
        want = {sp.name: sp for sp in plan.switches if sp.standby and sp.heartbeat_vid is not None
                and getattr(get_driver(s.switches[sp.name]["driver"]), "can_stage", False)}
        for name in list(self._staged):
            if name not in want:
                self.drop(name)
        for name, sp in want.items():
            self._one(s, sp)

    def _one(self, s: DeploymentState, sp: SwitchPlan) -> None:
        key = candidate_key(sp)
        with self._lock:
            cur = self._staged.get(sp.name)
        if cur is not None and cur.key == key:
            try:
                cur.drv.port_states()              # the session still answers
                return
            except HarmlessError:
                self.drop(sp.name)
        elif cur is not None:
            self.drop(sp.name)
        active = replace(sp, standby=False)
        drv = connect_deployed(s, sp.name)
        try:
            diff = drv.stage(active.access_changes(), active.trunk_changes())
        except BaseException:
            drv.close()
            raise
        with self._lock:
            self._staged[sp.name] = Staged(drv, key, diff)
        self.say(f"{sp.name}: take-over candidate staged on the switch ({len(diff.splitlines())} diff lines)")

    def take(self, sp: SwitchPlan) -> Staged | None:
        """The staged take-over of ``sp`` if it fits its plan (removed from here: the caller owns the session)."""
        with self._lock:
            st = self._staged.pop(sp.name, None)
        if st is not None and st.key != candidate_key(sp):
            st.drv.close()
            return None
        return st

    def drop(self, name: str) -> None:
        """Forget one switch's staged take-over (its candidate file emptied, its session closed)."""
        with self._lock:
            st = self._staged.pop(name, None)
        if st is not None:
            st.drv.unstage()
            st.drv.close()

    def names(self) -> list[str]:
        """The switches with a staged take-over now."""
        with self._lock:
            return sorted(self._staged)

    def drop_all(self) -> None:
        for name in list(self._staged):
            self.drop(name)


def warm(s: DeploymentState) -> None:
    """Import every deployed switch's driver and its NAPALM core driver now (seconds on a busy machine), so that a
    take-over does not pay for it."""
    for rec in s.switches.values():
        cls = get_driver(rec["driver"])
        name = getattr(cls, "napalm_name", "")
        if name:
            from napalm import get_network_driver      # noqa: PLC0415 - the import itself is what is wanted
            get_network_driver(name)
