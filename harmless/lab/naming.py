"""Which lab a lab command means: the one named, else the only one that is up (OSHI and overlay CLIs)."""
from __future__ import annotations

from collections.abc import Callable

from harmless.errors import InputError


def pick_lab(name: str | None, running: list[str], kind: str, up_hint: str,
             known: Callable[[str], object] | None = None) -> str:
    """The lab a command acts on.

    Args:
        name: ``--name`` as given (None: not given).
        running: names of the labs of this kind that are up.
        kind: ``OSHI``, ``overlay`` (in messages).
        up_hint: the command that starts such a lab (the fix when none is up).
        known: when given, a named lab must satisfy it (e.g. have a ``lab.json``).

    Raises:
        InputError: the named lab is not up (``known``), no lab is up, or several are and none was named.
    """
    if name:
        if known is not None and not known(name):
            raise InputError("--name", f"no {kind} lab named {name!r} is up", up_hint)
        return name
    if len(running) == 1:
        return running[0]
    raise InputError("--name", f"no {kind} lab is up" if not running else
                     f"several {kind} labs are up: {', '.join(running)}",
                     up_hint if not running else "pick one with --name")
