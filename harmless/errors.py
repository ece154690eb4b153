"""Errors that the CLI turns into one clear line (no traceback).

Every user-facing failure is a :class:`HarmlessError` carrying *where* (file and field, or component),
*what* went wrong and the *fix*. ``str(err)`` is the one line the CLI prints.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable


class HarmlessError(Exception):
    """A failure the user can act on.

    Args:
        where: file and field (``"examples/lab.yaml: switches[0].access_ports[1].interface"``) or component.
        problem: what is wrong, in one sentence.
        fix: what the user should do about it.
        exit_code: process exit status the CLI uses (2 = bad input, nothing changed; 1 = runtime failure; the
            whole table is in docs/cli.md).
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


class NothingToDo(HarmlessError):
    """The command has nothing to do (e.g. ``harmless down`` with nothing deployed): the CLI prints the line (not as
    an error) and exits 0, as running a command whose work is already done is a success (docs/cli.md)."""

    exit_code = 0


class DeviceError(HarmlessError):
    """The legacy switch refused, failed or could not be reached."""


class CommitError(DeviceError):
    """The device rejected a configuration commit (after which its original config is restored)."""


class OvsError(HarmlessError):
    """Open vSwitch (ovsdb-server / ovs-vswitchd / ovs-ofctl) failed."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the choices closest to ``word`` (difflib's ratio >= 0.6, at most two), or
    ``''`` when none is close. Used where an error names an unknown key, switch or value."""
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
