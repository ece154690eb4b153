"""Errors that the CLI turns into one clear line (no traceback).

Every user-facing failure is a :class:`HarmlessError` carrying *where* (file and field, or component),
*what* went wrong and the *fix*. ``str(err)`` is the one line the CLI prints.
"""
from __future__ import annotations

#: exit status when a run ends with its journal unfinished: a switch may be neither as before nor as asked (an
#: interrupted rollback, a ``down`` that could not restore every switch); ``harmless status`` names it and ``harmless
#: down`` (or ``harmless recover``) finishes it. The other codes: :class:`HarmlessError` (1), :class:`InputError` (2),
#: ``harmless.cli`` (3 partial ``up``, 4 no controller, 6 a switch differs from its deployment), 130 interrupted.
EXIT_UNFINISHED = 5


class HarmlessError(Exception):
    """A failure the user can act on.

    Args:
        where: file and field (``"examples/lab.yaml: switches[0].access_ports[1].interface"``) or component.
        problem: what is wrong, in one sentence.
        fix: what the user should do about it.
        exit_code: process exit status the CLI uses (2 = bad input, nothing changed; 1 = runtime failure).
    """

    exit_code = 1

    def __init__(self, where: str, problem: str, fix: str = "", exit_code: int | None = None):
        self.where, self.problem, self.fix = where, problem, fix
        if exit_code is not None:
            self.exit_code = exit_code
        super().__init__(str(self))

    def __str__(self) -> str:
        s = f"{self.where}: {self.problem}" if self.where else self.problem
        return f"{s} (fix: {self.fix})" if self.fix else s


class InputError(HarmlessError):
    """Bad input (inventory, arguments, catalog): nothing was changed. Exit code 2."""

    exit_code = 2


class DeviceError(HarmlessError):
    """The legacy switch refused, failed or could not be reached."""


class CommitError(DeviceError):
    """The device rejected a configuration commit (after which its original config is restored)."""


class OvsError(HarmlessError):
    """Open vSwitch (ovsdb-server / ovs-vswitchd / ovs-ofctl) failed."""
