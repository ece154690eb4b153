"""Typed results of the commands (``plan``, ``up``, ``down``, ``recover``, ``status``): what the CLI renders and
``--json`` dumps.

Layer: above the plan (a result carries a :class:`harmless.plan.Plan`), below the commands that return them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from harmless.conformance import Difference
from harmless.errors import Finding
from harmless.otc.reach import ControllerCheck
from harmless.ownership import SwitchRevert
from harmless.plan import Plan
from harmless.switch_drivers.base import DeviceFacts
from harmless.switch_drivers.devdiff import DeviceDiff


@dataclass
class PlanResult:
    """What ``plan``/``up`` computed.

    Attributes:
        plan: the plan.
        diffs: per switch the diff the device reported for the merge candidate (offline: the candidate's lines the
            saved config lacks); what ``up`` commits when it is not empty.
        facts: per switch the device facts.
        configs: per switch the rendered candidate.
        failed: switches that could not be read (``up`` tolerates them).
        findings: the warnings and notes of every switch (refusals are raised as :class:`~harmless.errors.Refused`).
        changes: per switch the full device diff, removals and additions per block, the same format online and
            offline (:mod:`harmless.switch_drivers.devdiff`).
        controllers: the controller checks from the server (:class:`harmless.otc.reach.ControllerCheck`; online
            ``plan`` only).
    """

    plan: Plan
    diffs: dict[str, str]
    facts: dict[str, DeviceFacts]
    configs: dict[str, str] = field(default_factory=dict)
    failed: dict[str, BaseException] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    changes: dict[str, DeviceDiff] = field(default_factory=dict)
    controllers: list[ControllerCheck] = field(default_factory=list)
    #: per switch the owned objects an incremental ``up`` gives back first (their labels; :mod:`harmless.ownership`)
    reverts: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The ``--json`` object: ``plan``, ``diffs``, ``device_vlans``, ``findings`` (each a
        :class:`~harmless.errors.Finding`), ``changes`` (per switch ``{"syntax", "blocks", "text"}``),
        ``controllers``, and ``reverts`` when an incremental ``up`` gives objects back first."""
        d = {"plan": self.plan.to_dict(), "diffs": self.diffs,
             "device_vlans": {n: sorted(f.vlans) for n, f in self.facts.items()},
             "findings": [f.model_dump(mode="json") for f in self.findings],
             "changes": {n: {**d.model_dump(mode="json"), "text": d.text()} for n, d in self.changes.items()},
             "controllers": [c.model_dump(mode="json") for c in self.controllers]}
        if self.reverts:
            d["reverts"] = self.reverts
        return d


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OmitWhenNone(BaseModel):
    """Base of a result whose fields named in ``OMIT_WHEN_NONE`` are left out of its dump while None (keys that
    ``--json`` printed only when they had a value, e.g. ``error``)."""

    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_none(self, handler) -> dict:
        d = handler(self)
        for key in self.OMIT_WHEN_NONE:
            if d.get(key) is None:
                d.pop(key, None)
        return d


class SwitchUp(_Result):
    """One switch's outcome of ``up``: ``migrated`` (committed now), ``unchanged`` (empty diff), ``given back`` (removed
    from the inventory: its original config is back, its bridge gone) or ``failed``."""

    status: Literal["migrated", "unchanged", "given back", "failed"]
    error: str | None = None


class UpResult(OmitWhenNone, _Result):
    """What ``harmless up`` did (``--json`` prints :meth:`model_dump` with ``mode="json"``).

    Attributes:
        plan: the deployed plan (``Plan.to_dict()``).
        diffs: per switch the device diff of this run ('' when nothing changed).
        changed: per switch whether this run committed to it.
        ovs: the server's OVS instance (``private``, ``base_dir``, ``netns``, ``datapath``).
        results: per inventory switch its outcome.
        failed: the switches that failed and were rolled back alone.
        controllers_connected: per br-of the connected controller targets.
        controllers_missing: why no controller connected (``--keep-on-no-controller``), else None.
        commit_confirm: per switch this run committed to, True when the commit was commit-confirm (the switch
            would have reverted by itself), False when it was a plain commit (the switch cannot commit-confirm).
        standby: with an ``ha`` pair, what the standby server answered to the replication (``{"server",
            "replicated", "built", "problems", "roles"}``; left out of the dump without ``ha``).
    """

    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("standby",)

    plan: dict
    diffs: dict[str, str]
    changed: dict[str, bool]
    ovs: dict
    results: dict[str, SwitchUp]
    failed: list[str]
    controllers_connected: dict[str, list[str]]
    controllers_missing: str | None = None
    commit_confirm: dict[str, bool] = Field(default_factory=dict)
    standby: dict | None = None


class DownResult(OmitWhenNone, _Result):
    """What ``harmless down`` did.

    Attributes:
        restored: per switch whether its running config equals its original with the operator's later changes kept
            (:mod:`harmless.ownership`; without such changes: the original byte for byte).
        config_restored: every device equals its original + kept changes (False when there was no switch to restore).
        ports_restored: per switch the ports whose mode/VLANs differ from before ``up`` other than by a kept
            change (empty: all back).
        server: what was removed or stopped on the server.
        origins: ``down -i``: per switch given back from a copy, where the original came from (the copy, its SHA-256
            verified); left out of the dump when None (no switch came from a copy).
        copies: the copies of originals removed once their switch was proven back (or left, and why); left out when
            None (there were none).
        notes: ``down -i``: switches of the inventory passed over, and why; left out when None.
        kept: per switch the operator's changes kept (object labels; absent: none).
        discarded: per switch the operator's changes ``--discard-changes`` dropped (absent: none).
        proven_against: per switch the backup file the device was proven equal to (the original, or the original
            with the kept changes).
        standby: with an ``ha`` pair, what the other server did (``{"server", "reached", "removed", "error"}``;
            left out of the dump without ``ha``).
    """

    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("standby",)

    restored: dict[str, bool]
    config_restored: bool
    ports_restored: dict[str, list[str]]
    server: list[str]
    origins: dict[str, str] | None = None
    copies: list[str] | None = None
    notes: list[str] | None = None
    kept: dict[str, list[str]] = Field(default_factory=dict)
    discarded: dict[str, list[str]] = Field(default_factory=dict)
    proven_against: dict[str, str] = Field(default_factory=dict)
    standby: dict | None = None
    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("origins", "copies", "notes", "standby")


class DownPreview(_Result):
    """What ``harmless down --dry-run`` found: what ``down`` would give back and remove; nothing was changed.

    Attributes:
        switches: per switch its :class:`harmless.ownership.SwitchRevert` (reverted, kept, conflicts, the diff).
        unreachable: per switch that could not be read, why.
        bridges: the bridges ``down`` would remove (present now).
        stop_ovs: HARMLESS's private Open vSwitch instances it would stop.
        unfinished_journal: an interrupted run ``down`` would finish (None: none).
        blocked: ``down`` would stop on a conflict (the operator changed what HARMLESS owns).
    """

    switches: dict[str, SwitchRevert]
    unreachable: dict[str, str] = Field(default_factory=dict)
    bridges: list[str] = Field(default_factory=list)
    stop_ovs: list[str] = Field(default_factory=list)
    unfinished_journal: str | None = None
    blocked: bool = False


class RecoverResult(_Result):
    """What ``harmless recover`` did; it dumps flat, as ``{"recovered": ..., <the details of that kind>}``.

    Attributes:
        recovered: ``nothing``, ``qos`` (an interrupted ``qos set`` finished), ``restore`` (an interrupted
            ``harmless restore`` run again), ``portmod`` (a legacy port shut or re-enabled for a controller's
            port-down, interrupted: made what the state says), ``previous deployment`` (an interrupted incremental
            ``up`` undone), ``roles`` (an interrupted take-over of an active/standby pair finished: the roles the
            devices say taken, ``details`` has them) or ``down`` (as ``harmless down``).
        switches: the switches put back (``previous deployment``).
        down: :func:`down`'s result (``down``).
        details: the result of the finishing command (``qos``: ``applied``; ``restore``: restore's keys;
            ``portmod``: ``switch``, ``interface``, ``shut``).
    """

    recovered: Literal["nothing", "qos", "restore", "portmod", "previous deployment", "roles", "down"]
    switches: list[str] | None = None
    down: DownResult | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _flat(self, handler) -> dict:
        d = handler(self)
        out = {"recovered": d["recovered"], **d["details"]}
        if d["switches"] is not None:
            out["switches"] = d["switches"]
        if d["down"] is not None:
            out.update(d["down"])
        return out


class PortStatus(_Result):
    """One migrated port in ``harmless status``.

    ``device_link``: up/down/admin-down/unknown as the device reports it; ``br_of_state``: the OpenFlow port state a
    controller sees (e.g. LIVE, LINK_DOWN); ``blocked_by_watch``: ``harmless watch`` holds the port link-down;
    ``admin_down``: a controller holds the port down (OFPPC_PORT_DOWN, :mod:`harmless.portmod`); ``device_shut``:
    HARMLESS shut the legacy port for it (``state.json`` ``port_admin``); ``qos``: the port's QoS (docs/qos.md) or
    None.
    """

    interface: str
    ofport: int
    vid: int
    device_link: str
    br_of_state: str
    blocked_by_watch: bool
    rx_packets: int
    tx_packets: int
    qos: dict | None = None
    admin_down: bool = False
    device_shut: bool = False


class SwitchStatus(OmitWhenNone, _Result):
    """One deployed switch in ``harmless status``: its br-of, ports, controllers (as
    :func:`harmless.otc.bridges.port_status` reports them) and trunks; ``error`` when OVS could not be read;
    ``differences`` how the device differs from what HARMLESS deployed (:func:`harmless.conformance.check`; ``[]``
    as deployed, left out when the device was not read); ``device_error`` why the device could not be read."""

    name: str
    bridge: str
    datapath_id: str
    ports: list[PortStatus]
    controllers: list[dict]
    trunks: dict[str, dict]
    error: str | None = None
    differences: list[Difference] | None = None
    device_error: str | None = None
    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("error", "differences", "device_error")


class StatusReport(_Result):
    """``harmless status``: ``deployed`` False carries only ``switches`` (empty) and ``unfinished_journal``.

    ``ha``: with an active/standby pair, this server's view of it (:func:`harmless.ha.view.pair_view`: roles, the
    peer's health, BFD, the last failover); left out of the dump without a pair."""

    deployed: bool
    switches: list[SwitchStatus] = Field(default_factory=list)
    unfinished_journal: str | None = None
    inventory: str | None = None
    ovs_running: bool | None = None
    ha: dict | None = None

    @model_serializer(mode="wrap")
    def _as_before(self, handler) -> dict:
        d = handler(self)
        if not d["deployed"]:
            return {"deployed": False, "switches": [], "unfinished_journal": d["unfinished_journal"]}
        out = {"deployed": True, "unfinished_journal": d["unfinished_journal"], "inventory": d["inventory"],
               "ovs_running": d["ovs_running"], "switches": d["switches"]}
        return {**out, "ha": d["ha"]} if d["ha"] is not None else out
