"""Typed results of the commands (``plan``, ``up``, ``down``, ``recover``, ``status``): what the CLI renders and
``--json`` dumps.

Layer: above the plan (a result carries a :class:`harmless.plan.Plan`), below the commands that return them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harmless.plan import Plan
from harmless.switch_drivers.base import DeviceFacts


@dataclass
class PlanResult:
    """What ``plan``/``up`` computed: the plan, the per-switch device diff and device facts."""

    plan: Plan
    diffs: dict[str, str]
    facts: dict[str, DeviceFacts]
    configs: dict[str, str] = field(default_factory=dict)
    failed: dict[str, BaseException] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"plan": self.plan.to_dict(), "diffs": self.diffs,
                "device_vlans": {n: sorted(f.vlans) for n, f in self.facts.items()}}
