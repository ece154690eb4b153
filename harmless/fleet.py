"""Many switches at once: Nornir runs one task per legacy switch in parallel (DESIGN.md §5, "Nornir for many devices").

The orchestrator hands :func:`run_per_switch` a function of one inventory switch; Nornir's threaded runner calls it for
every switch, and the per-switch outcome comes back as :class:`SwitchOutcome` (value or the error, never raised), so a
failure on one switch cannot stop the others. Passwords are not put into the Nornir inventory: the task resolves them
itself (they stay out of Nornir's result objects and logs).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory as NornirInventory
from nornir.core.task import Result, Task
from nornir.plugins.runners import ThreadedRunner

from harmless.inventory import Switch

#: most switches worked on at once (SSH sessions; NAPALM's inline transfer dominates per switch)
MAX_WORKERS = 8


@dataclass
class SwitchOutcome:
    """What one switch's task gave: ``value`` when ``ok``, else ``error`` (the exception it raised)."""

    name: str
    ok: bool
    value: Any = None
    error: BaseException | None = None


def nornir_for(switches: list[Switch], workers: int = MAX_WORKERS) -> Nornir:
    """A Nornir object whose hosts are the given switches (``host.data["switch"]`` is the inventory entry).

    Args:
        switches: validated inventory switches (order kept).
        workers: threads of the runner (at least 1, at most ``len(switches)``).
    """
    hosts = Hosts({sw.name: Host(name=sw.name, hostname=sw.host, port=sw.port, username=sw.username,
                                 platform=sw.driver, data={"switch": sw}) for sw in switches})
    inv = NornirInventory(hosts=hosts, groups=Groups(), defaults=Defaults())
    return Nornir(inventory=inv, runner=ThreadedRunner(num_workers=max(1, min(workers, len(switches)))))


def run_per_switch(switches: list[Switch], fn: Callable[[Switch], Any],
                   on_done: Callable[[SwitchOutcome], None] | None = None,
                   workers: int = MAX_WORKERS, name: str = "harmless") -> dict[str, SwitchOutcome]:
    """Run ``fn(switch)`` for every switch in parallel through Nornir; never raises for a switch's failure.

    Args:
        switches: the switches to work on.
        fn: the per-switch work; its return value becomes ``SwitchOutcome.value``; any exception is caught.
        on_done: called (from worker threads) as each switch finishes, e.g. to advance a progress bar.
        workers: parallel sessions.
        name: Nornir task name (shows in Nornir's own logs).

    Returns:
        ``{switch name: SwitchOutcome}`` in the order of ``switches``. A KeyboardInterrupt in the caller's thread
        propagates after the running tasks return.
    """
    if not switches:
        return {}
    outcomes: dict[str, SwitchOutcome] = {}

    def task(t: Task) -> Result:
        sw: Switch = t.host.data["switch"]
        try:
            out = SwitchOutcome(sw.name, True, value=fn(sw))
        except Exception as e:  # noqa: BLE001 - reported per switch, never lost
            out = SwitchOutcome(sw.name, False, error=e)
        outcomes[sw.name] = out
        if on_done:
            on_done(out)
        return Result(host=t.host, result=out.ok, failed=not out.ok)

    logging.getLogger("nornir").setLevel(logging.WARNING)
    nornir_for(switches, workers).run(task=task, name=name, raise_on_error=False)
    return {sw.name: outcomes.get(sw.name) or SwitchOutcome(sw.name, False, error=RuntimeError("task did not run"))
            for sw in switches}
