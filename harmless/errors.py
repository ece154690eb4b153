"""Errors that the CLI turns into one clear line (no traceback).

Every user-facing failure is a :class:`HarmlessError` carrying *where* (file and field, or component),
*what* went wrong and the *fix*. ``str(err)`` is the one line the CLI prints. Checks that run before any change
collect :class:`Finding` objects (refusals, warnings, notes) and raise them all at once as :class:`Refused`.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict


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


class Finding(BaseModel):
    """One thing found before any change: a refusal (nothing may change until it is fixed), a warning (the change
    goes ahead; the user should know) or a note (what the plan does, e.g. a trunk's load).

    Attributes:
        severity: ``refusal``, ``warning`` or ``note``.
        kind: a stable name of the rule (``access-is-trunk``, ``keep-feature``, ``trunk-shared``, ...; the list is
            in docs/preflight.md), for scripts reading ``--json``.
        where: inventory file and field (``inv.yaml: switches[0].access_ports[3].keep``) or component.
        problem: what is wrong or worth knowing, naming the switch and port.
        fix: what to do about it ('' for a note).
        inventory: the exact inventory text that fixes it, when the fix is an inventory change
            (``{interface: Gi1/0/5, keep: [voice]}``), else None.
        explain: explanations shared by findings of the same kind (what ``keep: [voice]`` means), each printed
            once however many findings name it.
        switch: the inventory switch it concerns, None for the whole deployment.
        port: the interface it concerns (inventory spelling), None for the whole switch.
    """

    model_config = ConfigDict(frozen=True)

    severity: Literal["refusal", "warning", "note"]
    kind: str
    where: str
    problem: str
    fix: str = ""
    inventory: str | None = None
    explain: tuple[str, ...] = ()
    switch: str | None = None
    port: str | None = None

    def line(self) -> str:
        """``<where>: <problem> (fix: <fix>)``, the one line the CLI prints after ``error:``/``warning:``/``note:``."""
        s = f"{self.where}: {self.problem}" if self.where else self.problem
        return f"{s} (fix: {self.fix})" if self.fix else s


class Refused(InputError):
    """Every refusal found before any change, at once (``plan`` and ``up``'s first stage); exit code 2.

    ``findings`` holds them all, warnings and notes too (the CLI prints each; ``str()`` is the refusals' lines).
    ``where``/``problem``/``fix`` are the first refusal's.
    """

    def __init__(self, findings: list[Finding]):
        self.findings = list(findings)
        first = next(f for f in self.findings if f.severity == "refusal")
        super().__init__(first.where, first.problem, first.fix)

    @property
    def refusals(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "refusal"]

    def __str__(self) -> str:
        return "\n".join(f.line() for f in self.refusals)


def raise_refusals(findings: list[Finding]) -> None:
    """Raise :class:`Refused` with ``findings`` when any of them is a refusal; return otherwise."""
    if any(f.severity == "refusal" for f in findings):
        raise Refused(findings)


#: the label the CLI prints before a finding of each severity
LABELS = {"refusal": "error", "warning": "warning", "note": "note"}


def report_lines(findings: list[Finding]) -> list[tuple[str, str]]:
    """The lines to print for ``findings``, as ``(label, text)``: refusals, then warnings, then notes (each in
    order), then every shared explanation once, with the ports it concerns (pure).

    Returns:
        e.g. ``[("error", "inv.yaml: switches[0].access_ports[0].keep: sw1 Gi1/0/5 has a voice VLAN (110) ...
        (fix: ...)"), ..., ("note", "keep: [voice]: the voice VLAN stays ... (sw1: Gi1/0/5, Gi1/0/6)")]``.
    """
    order = {"refusal": 0, "warning": 1, "note": 2}
    out = [(LABELS[f.severity], f.line()) for f in sorted(findings, key=lambda f: order[f.severity])]
    shared: dict[str, dict[str, list[str]]] = {}
    for f in findings:
        for x in f.explain:
            ports = shared.setdefault(x, {}).setdefault(f.switch or "", [])
            if f.port and f.port not in ports:
                ports.append(f.port)
    for x, by_switch in shared.items():
        who = "; ".join(f"{sw}: {', '.join(ports)}" if sw else ", ".join(ports) for sw, ports in by_switch.items()
                        if ports)
        out.append(("note", f"{x}" + (f" ({who})" if who else "")))
    return out


def summary(findings: list[Finding]) -> str:
    """``"6 refusals, 1 warning"`` (severities with none left out; ``"nothing to report"`` when empty)."""
    counts = [(sum(1 for f in findings if f.severity == s), s) for s in ("refusal", "warning", "note")]
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for n, s in counts if n]
    return ", ".join(parts) or "nothing to report"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the choices closest to ``word`` (difflib's ratio >= 0.6, at most two), or
    ``''`` when none is close. Used where an error names an unknown key, switch or value."""
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
