"""What HARMLESS owns on a switch, and the three-way merge that gives back only its own lines (pure).

A running config is read as a sequence of *objects*, each a key and its lines in device order (:data:`Units`): on
IOS and EOS a top-level line with its indented children (``interface FastEthernet0/7`` + `` switchport ...``), on
Junos the statements of one interface or VLAN (``interfaces ge-0/0/7``, ``vlans hl107``; a non-ELS VLAN-side member
``vlans users interface ge-0/0/8.0`` belongs to its port), on ProCurve one VLAN's own lines (``vlan 107``: name, IP)
and one port's memberships (``port 7``: ``vlan 107 untagged``, ...). The syntaxes live with their drivers
(:mod:`.blocksyntax`, :mod:`.junos.ownership`, :mod:`.procurve.ownership`); :func:`syntax_for` names them.

HARMLESS owns exactly the objects its tagging config addresses (:meth:`ConfigSyntax.touched` of the rendered
candidate: the migrated ports, its VLANs, the trunks). For each it remembers the lines before it first wrote the
object (``base``) and the lines it left there (``ours``). Everything else is the operator's, also while migrated.

:func:`three_way` merges (base, ours, the device now) per owned object:

    device now == ours   → HARMLESS's lines are still there: revert them (the object goes back to ``base``)
    device now == base   → already back (an interrupted ``down``, a reload without the migration): nothing to do
    anything else        → a conflict: the operator changed what HARMLESS owns; never overwritten silently

and keeps every object HARMLESS does not own as the device has it now. The result is the config the device must
end with; :meth:`ConfigSyntax.assemble` writes it as text for a config replace (the device's own text for every
object kept, so the replace only touches what is reverted).
"""
from __future__ import annotations

import abc
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: one config as objects: ``{key: lines}`` in config order (a key is normalised: lower case, single spaces)
Units = dict[str, tuple[str, ...]]
#: what becomes of an object in a target config: its lines, or None (the object is removed)
Lines = tuple[str, ...] | None


def norm(line: str) -> str:
    """The comparison form of a config line or key: words joined by one space, lower case."""
    return " ".join(line.split()).lower()


class ConfigSyntax(abc.ABC):
    """How one switch OS's running config splits into objects, and how a merged config is written back.

    Attributes:
        name: the syntax name recorded in the state (``blocks``, ``junos``, ``procurve``).
    """

    name: str = ""

    @abc.abstractmethod
    def units(self, text: str) -> Units:
        """The objects of a config text (``{key: lines}`` in config order). Pure.

        Raises:
            ValueError: the text does not parse (the message says where).
        """

    @abc.abstractmethod
    def touched(self, candidate: str) -> list[str]:
        """Keys of the objects a rendered tagging config (a merge candidate) sets or removes, in order. Pure."""

    @abc.abstractmethod
    def assemble(self, text: str, replace: Mapping[str, Lines], order: Iterable[str] = ()) -> str:
        """``text`` with the objects of ``replace`` replaced by its lines (None: removed). Pure.

        Args:
            text: a running config (the device's text).
            replace: ``{key: lines or None}``; a key that ``text`` lacks is inserted.
            order: keys of a config in which the inserted objects had their place (an original): an inserted object
                goes after the nearest object before it there that ``text`` has (else at the end).

        Returns:
            Config text the driver's config replace (``restore``) takes.
        """

    def label(self, key: str, lines: Lines) -> str:
        """How an object is named to people: its first line (an IOS/EOS header), else its key."""
        return lines[0].strip() if lines else key

    def show(self, lines: Lines) -> list[str]:
        """An object's lines as people read them (the device's syntax)."""
        return [ln.rstrip() for ln in (lines or ())]


@dataclass(frozen=True)
class Owned:
    """One object HARMLESS wrote: its key, the lines before (``base``) and the lines it left (``ours``); None: absent.
    """

    key: str
    base: Lines
    ours: Lines


@dataclass(frozen=True)
class Conflict:
    """An owned object the operator changed: HARMLESS left ``ours``, the device now has ``now``, the original
    (before HARMLESS) was ``base``."""

    key: str
    base: Lines
    ours: Lines
    now: Lines


@dataclass
class Merged:
    """The outcome of :func:`three_way` (pure data).

    Attributes:
        target: every object of the config the device must end with (``{key: lines}``, device order).
        reverted: owned keys whose lines go back to ``base``.
        already: owned keys the device already has in their ``base`` form.
        conflicts: owned objects the operator changed (the merge keeps the device's lines for them in ``target``
            only when ``discard`` is False; callers refuse before using such a target).
        replace: ``{key: lines or None}`` that turns the device's text into ``target`` (:meth:`ConfigSyntax.assemble`).
    """

    target: Units
    reverted: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    replace: dict[str, Lines] = field(default_factory=dict)


def three_way(owned: Iterable[Owned], now: Units, discard: bool = False) -> Merged:
    """Revert HARMLESS's own objects of ``now`` to their ``base`` and keep everything else (see the module doc). Pure.

    Args:
        owned: the objects HARMLESS wrote (all of them for ``down``; a subset for an incremental ``up``).
        now: the device's config now (:meth:`ConfigSyntax.units`).
        discard: an owned object the operator changed goes back to ``base`` too (it is still listed in
            ``conflicts``).

    Returns:
        :class:`Merged`.
    """
    m = Merged(target=dict(now))
    for o in owned:
        have = now.get(o.key)
        if have == o.base:
            m.already.append(o.key)
            continue
        if have != o.ours:
            m.conflicts.append(Conflict(o.key, o.base, o.ours, have))
            if not discard:
                continue
        m.reverted.append(o.key)
        m.replace[o.key] = o.base
        if o.base is None:
            m.target.pop(o.key, None)
        else:
            m.target[o.key] = o.base
    return m


def changed_keys(a: Units, b: Units) -> list[str]:
    """Keys whose lines differ between two configs (present in one only, or different lines), in ``b``'s then
    ``a``'s order. Pure."""
    keys = list(b) + [k for k in a if k not in b]
    return [k for k in keys if a.get(k) != b.get(k)]


def owned_after(syntax: ConfigSyntax, candidate: str, before: Units, after: Units,
                previous: Mapping[str, Owned], base_from: Units | None = None) -> list[Owned]:
    """What HARMLESS owns after committing ``candidate``: every object it addresses, with its base and its lines now.

    Args:
        syntax: the switch's config syntax.
        candidate: the tagging config just committed.
        before: the device's config before this commit (the base of an object HARMLESS takes now).
        after: the device's config right after the commit (``ours``).
        previous: what HARMLESS owned before this commit (an object owned already keeps its base).
        base_from: where the base of a newly taken object comes from instead of ``before`` (an original, when no
            ownership was recorded before: then ``before`` may already carry HARMLESS's lines).

    Returns:
        One :class:`Owned` per addressed object, in the candidate's order.
    """
    src = before if base_from is None else base_from
    out = []
    for key in syntax.touched(candidate):
        base = previous[key].base if key in previous else src.get(key)
        out.append(Owned(key, base, after.get(key)))
    return out


#: syntax name -> ``"module:Class"`` (what :func:`syntax_for` builds)
SYNTAXES = {
    "blocks": "harmless.switch_drivers.blocksyntax:BlockSyntax",
    "junos": "harmless.switch_drivers.junos.ownership:JunosSyntax",
    "procurve": "harmless.switch_drivers.procurve.ownership:ProcurveSyntax",
}
#: inventory driver (or a netmiko ``device_type``) -> its syntax name
DRIVER_SYNTAX = {"ios": "blocks", "eos": "blocks", "netmiko_cli": "blocks", "cisco_ios": "blocks",
                 "junos": "junos", "procurve": "procurve", "hp_procurve": "procurve"}


def syntax_for(name: str) -> ConfigSyntax:
    """The :class:`ConfigSyntax` of a syntax name (``blocks``, ``junos``, ``procurve``) or of a driver name.

    Raises:
        KeyError: no syntax is known for ``name``.
    """
    mod, _, cls = SYNTAXES[DRIVER_SYNTAX.get(name, name)].partition(":")
    return getattr(importlib.import_module(mod), cls)()
