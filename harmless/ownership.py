"""HARMLESS owns only what it wrote: the ownership record of each switch, and what ``down`` (or an incremental ``up``)
gives back — the device's config with HARMLESS's own objects reverted and everything the operator changed kept.

Layer: plan (pure functions of config texts and the state's :class:`harmless.state.Ownership`; the device steps in
:mod:`harmless.down` and :mod:`harmless.up` read and write the devices). The merge itself, per config syntax, is
:mod:`harmless.switch_drivers.ownership`; the model is documented in docs/ownership.md.

    original ──► HARMLESS's commit (ours) ──► the operator's edits (device now)
        └────── down: every owned object back to its base; every other object as the device has it now ──────┘

A change of the operator to an owned object (a migrated port, a HARMLESS VLAN, the trunk) is a *conflict*:
:class:`DriftConflict` stops ``down`` before anything changes, with the lines shown and the choices named.
"""
from __future__ import annotations

import difflib
from typing import Literal

from pydantic import BaseModel, Field

from harmless import state as st
from harmless.errors import HarmlessError
from harmless.switch_drivers import devdiff
from harmless.switch_drivers.ownership import (ConfigSyntax, Lines, Merged, Owned, Units, changed_keys, owned_after,
                                               syntax_for, three_way)

#: exit status of a ``down`` (or ``up``) that stopped on a conflict: nothing was changed, the switch is still migrated
EXIT_CONFLICT = 5


class ObjectChange(BaseModel):
    """One config object that changes: its lines before and after (in the device's syntax; None: absent)."""

    key: str
    label: str
    before: list[str] | None = None
    after: list[str] | None = None


class ObjectConflict(BaseModel):
    """An owned object the operator changed: its lines before HARMLESS (``original``), as HARMLESS left them
    (``harmless``) and on the device now (``now``)."""

    key: str
    label: str
    original: list[str] | None = None
    harmless: list[str] | None = None
    now: list[str] | None = None


class SwitchRevert(BaseModel):
    """What ``down`` gives back on one switch (also what ``down --dry-run`` shows).

    Attributes:
        switch: the switch.
        mode: ``merge`` (HARMLESS's objects reverted, the operator's changes kept), ``exact`` (no record of what
            HARMLESS wrote, e.g. a deployment of an older harmless or an interrupted first ``up``: the original
            exactly) or ``discard`` (``--discard-changes``: the original exactly).
        original: the original backup file.
        reverted: owned objects that go back (device now → after; in mode ``exact`` every object that changes).
        kept: the operator's changes that stay (original → after): the device ends as the original + these.
        discarded: with ``--discard-changes``, the operator's changes that are lost (device now → original).
        conflicts: owned objects the operator changed (``down`` stops unless ``--discard-changes``).
        equals_original: the device ends byte for byte as the original.
        diff: the change from the running config to what ``down`` leaves (the device diff ``plan`` prints, or object
            by object without a device-diff syntax).
        target: the config text the device is replaced with (not in ``--json``).
    """

    switch: str
    mode: Literal["merge", "exact", "discard"]
    original: str
    reverted: list[ObjectChange] = Field(default_factory=list)
    kept: list[ObjectChange] = Field(default_factory=list)
    discarded: list[ObjectChange] = Field(default_factory=list)
    conflicts: list[ObjectConflict] = Field(default_factory=list)
    equals_original: bool = True
    diff: str = ""
    target: str = Field(default="", exclude=True)


class DriftConflict(HarmlessError):
    """The operator changed what HARMLESS owns (``reverts`` shows where); nothing was changed. Exit code 5."""

    exit_code = EXIT_CONFLICT

    def __init__(self, reverts: list[SwitchRevert], command: str = "harmless down"):
        self.reverts = reverts
        what = "; ".join(f"{r.switch}: " + ", ".join(c.label for c in r.conflicts) for r in reverts if r.conflicts)
        if command == "harmless up":
            fix = ("these objects leave HARMLESS with this inventory but were changed by hand since the last up: "
                   "to keep the change, put the port back into the inventory (or edit the object back to what "
                   "HARMLESS left) and retry; harmless down --dry-run shows the lines")
        else:
            fix = ("to keep your change, edit the object back to what HARMLESS left and retry; or run harmless down "
                   "--discard-changes to restore the original exactly (every change made since up is lost); "
                   "harmless down --dry-run shows the lines")
        super().__init__(command, f"the operator changed what HARMLESS owns ({what}); nothing was changed", fix)


# ----------------------------------------------------------------------------- the record
def owned_of(o: st.Ownership | None) -> dict[str, Owned]:
    """The state's record as the merge's :class:`Owned` objects, by key."""
    if o is None:
        return {}
    return {x.key: Owned(x.key, _t(x.base), _t(x.ours)) for x in o.objects}


def _t(lines: list[str] | None) -> Lines:
    return None if lines is None else tuple(lines)


def _l(lines: Lines) -> list[str] | None:
    return None if lines is None else list(lines)


def record(syntax_name: str, candidate: str, before: str, after: str, previous: st.Ownership | None,
           original: str | None = None) -> st.Ownership:
    """What HARMLESS owns on a switch after committing ``candidate`` (pure).

    Args:
        syntax_name: the switch's config syntax (:func:`~harmless.switch_drivers.ownership.syntax_for`).
        candidate: the tagging config committed.
        before: the running config before this run (the base of an object HARMLESS takes now).
        after: the running config after the commit.
        previous: the record before this run (objects owned already keep their base), None on a first migration.
        original: with no previous record on a switch migrated before (a state of an older harmless), the original
            backup: the base of every object comes from it.

    Raises:
        ValueError: a config does not parse in that syntax.
    """
    syntax = syntax_for(syntax_name)
    after_u = syntax.units(after)
    base_from = syntax.units(original) if previous is None and original is not None else None
    objs = owned_after(syntax, candidate, syntax.units(before), after_u, owned_of(previous), base_from)
    return st.Ownership(syntax=syntax.name, objects=[
        st.OwnedObject(key=o.key, label=syntax.label(o.key, o.ours or o.base), base=_l(o.base), ours=_l(o.ours))
        for o in objs])


def dropped(o: st.Ownership | None, candidate: str) -> list[str]:
    """Owned keys the new candidate no longer addresses (a port removed from the inventory, a VID or trunk moved):
    an incremental ``up`` gives them back first. Pure."""
    if o is None:
        return []
    wanted = set(syntax_for(o.syntax).touched(candidate))
    return [x.key for x in o.objects if x.key not in wanted]


# ----------------------------------------------------------------------------- the merge
def plan_down(switch: str, o: st.Ownership | None, syntax: ConfigSyntax, original: str, now: str,
              original_file: str, discard: bool = False, diff_syntax: str | None = None) -> SwitchRevert:
    """What ``down`` gives back on one switch (pure): the original with the operator's later changes kept.

    Args:
        o: what HARMLESS owns there (None: not recorded → the original exactly, mode ``exact``).
        syntax: the switch's config syntax.
        original: the original backup's text; ``now``: the device's running config.
        discard: ``--discard-changes``: the original exactly (conflicts are still listed).
        diff_syntax: the switch's syntax for :mod:`harmless.switch_drivers.devdiff` (``ios``, ``eos``, ``junos``,
            ``procurve``): ``diff`` is then the device diff every command prints (NAPALM ``compare_config`` style);
            None: object by object (:func:`object_diff`).

    Raises:
        ValueError: a config does not parse in that syntax (the message says where).
    """
    owned = owned_of(o)
    now_u, orig_u = syntax.units(now), syntax.units(original)
    m = three_way(owned.values(), now_u)
    r = SwitchRevert(switch=switch, mode="discard" if discard else "merge" if o is not None else "exact",
                     original=original_file, conflicts=_conflicts(syntax, m))
    if r.mode != "merge" or not changed_keys(orig_u, m.target):
        target, target_u = original, orig_u
    else:
        target, target_u = syntax.assemble(now, m.replace, orig_u), m.target
    r.target, r.equals_original = target, target == original
    changed = changed_keys(now_u, target_u)
    mine = [k for k in changed if k in owned or r.mode == "exact"]
    r.reverted = _changes(syntax, now_u, target_u, mine)
    r.discarded = _changes(syntax, now_u, target_u, [k for k in changed if k not in mine])
    clash = {c.key for c in m.conflicts}
    r.kept = _changes(syntax, orig_u, target_u, [k for k in changed_keys(orig_u, target_u) if k not in clash])
    r.diff = _device_diff(now, target, diff_syntax) if diff_syntax else object_diff(syntax, now_u, target_u)
    return r


def _device_diff(now: str, target: str, diff_syntax: str) -> str:
    """What turns ``now`` into ``target`` in the one device-diff format (:func:`devdiff.config_diff`)."""
    return devdiff.config_diff(now, target, diff_syntax).text().rstrip("\n")


def plan_revert(o: st.Ownership, now: str, keys: list[str]) -> tuple[str, Merged]:
    """The running config with only the owned objects ``keys`` given back (an incremental ``up``), and the merge
    (its ``conflicts`` must be empty before the text is used). Pure; raises ValueError as :func:`plan_down`."""
    syntax = syntax_for(o.syntax)
    owned = owned_of(o)
    m = three_way([owned[k] for k in keys if k in owned], syntax.units(now))
    return (syntax.assemble(now, m.replace) if m.replace else now), m


def port_keys(o: st.Ownership | None, candidate: str, ports: list[str]) -> list[str]:
    """Owned keys of the switch ports ``ports`` (their object in the candidate: ``interface gigabitethernet0/1``,
    ``interfaces ge-0/0/25``, ``port 25``). Pure."""
    if o is None or not ports:
        return []
    owned = {x.key for x in o.objects}
    names = {p.lower() for p in ports}
    return [k for k in syntax_for(o.syntax).touched(candidate) if k in owned and k.split()[-1] in names]


def revert_conflicts(switch: str, o: st.Ownership, now: str, keys: list[str]) -> SwitchRevert | None:
    """The objects ``keys`` an incremental ``up`` gives back that the operator changed (None: none). Pure."""
    _text, m = plan_revert(o, now, keys)
    if not m.conflicts:
        return None
    return SwitchRevert(switch=switch, mode="merge", original="", conflicts=_conflicts(syntax_for(o.syntax), m))


def labels(o: st.Ownership | None, keys: list[str]) -> list[str]:
    """How the owned objects ``keys`` are named to people."""
    by_key = {x.key: x.label for x in (o.objects if o else ())}
    return [by_key.get(k, k) for k in keys]


def unproven(syntax: ConfigSyntax, target: str, running: str) -> list[str]:
    """Objects (their labels) whose lines differ between the target and the running config; [] proves ``down``
    line by line. Pure."""
    t, r = syntax.units(target), syntax.units(running)
    return [syntax.label(k, t.get(k) or r.get(k)) for k in changed_keys(r, t)]


def object_diff(syntax: ConfigSyntax, a: Units, b: Units) -> str:
    """Object by object, what turns ``a`` into ``b``: a ``~ label`` line, then ``-``/``+`` lines. Pure."""
    out: list[str] = []
    for k in changed_keys(a, b):
        out.append(f"~ {syntax.label(k, b.get(k) or a.get(k))}")
        for ln in difflib.ndiff(syntax.show(a.get(k)), syntax.show(b.get(k))):
            if ln[:1] in "-+":
                out.append(ln[0] + " " + ln[2:].rstrip())
    return "\n".join(out)


def _changes(syntax: ConfigSyntax, a: Units, b: Units, keys: list[str]) -> list[ObjectChange]:
    return [ObjectChange(key=k, label=syntax.label(k, b.get(k) or a.get(k)), before=_l(_show(syntax, a.get(k))),
                         after=_l(_show(syntax, b.get(k)))) for k in keys]


def _show(syntax: ConfigSyntax, lines: Lines) -> Lines:
    return None if lines is None else tuple(syntax.show(lines))


def _conflicts(syntax: ConfigSyntax, m: Merged) -> list[ObjectConflict]:
    return [ObjectConflict(key=c.key, label=syntax.label(c.key, c.now or c.ours or c.base),
                           original=_l(_show(syntax, c.base)), harmless=_l(_show(syntax, c.ours)),
                           now=_l(_show(syntax, c.now))) for c in m.conflicts]
