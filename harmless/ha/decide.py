"""When a standby server takes over (pure): the two paths that say whether the active is alive, and the guards.

The standby of a switch fences the active (moves the VLANs to its own trunk, :mod:`harmless.ha.failover`) only when
the active is gone on **both** paths (docs/high-availability.md):

* the data path: BFD (RFC 5880) on the heartbeat VLAN through the legacy switch, between the two servers' OVS, is
  down (``forwarding=false``: no control packet for ``interval * multiplier`` ms);
* the management path: no authentic heartbeat from the active's agent for that long, or its last heartbeat said its
  own data path for this switch is broken (its ovs-vswitchd is not running or its trunk link is down).

and only when it can carry the traffic itself: its own BFD state is readable (its ovs-vswitchd runs), its own trunk
link is up, and it has seen the active healthy on both paths since its role last changed (``armed``) — so a server
that was just fenced in a partition does not fence back while the partition lasts. One path alone never triggers a
take-over (a management cut with a live data path is not a failure of the active).

Exactly one trunk forwards whatever these inputs are: the device's config is the arbiter and every fencing commit
sets both trunks in one candidate (:meth:`harmless.plan.SwitchPlan.trunk_changes`); these rules only keep take-overs
from happening without need.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Action = Literal["stay", "fence", "reread"]


@dataclass(frozen=True)
class Sight:
    """What a server sees of one switch's pair at one instant.

    Attributes:
        role: its role as the device last said (:data:`harmless.ha.plan.Role`) or ``unknown`` (not read yet).
        bfd: BFD forwarding on its heartbeat port (None: its ovs-vswitchd is not running, it cannot tell).
        own_trunk_up: its own trunk interface has carrier.
        heard_ms: ms since the last authentic heartbeat from the peer's agent (None: never heard).
        peer_dataplane: what that heartbeat said of the peer's data path for this switch (None: not said).
        peer_role: the role the peer's heartbeat claims for this switch (None: not said).
        armed: both paths said the peer was healthy at once since this server's role last changed.
        detect_ms: the detection time, ``interval_ms * multiplier``.
        peer_busy: the peer's last heartbeat said a harmless command holds its state lock (``up``, ``down``,
            ``recover``: an operator at work there, whose ``down`` takes the bridges away on purpose).
    """

    role: str
    bfd: bool | None
    own_trunk_up: bool
    heard_ms: float | None
    peer_dataplane: bool | None
    peer_role: str | None
    armed: bool
    detect_ms: int
    peer_busy: str | None = None


@dataclass(frozen=True)
class Decision:
    """What to do now and why (one line for the log, ``harmless status`` and the failover record)."""

    action: Action
    reason: str


def mgmt_alive(s: Sight) -> bool:
    """The management path says the peer is alive and can forward this switch's traffic."""
    return s.heard_ms is not None and s.heard_ms <= s.detect_ms and s.peer_dataplane is not False


def healthy(s: Sight) -> bool:
    """Both paths say the peer is healthy (what arms a standby)."""
    return mgmt_alive(s) and s.bfd is True


def decide(s: Sight) -> Decision:
    """What the server should do about one switch now (see the module doc). Pure."""
    if s.role in ("unknown", "neither", "both"):
        return Decision("reread", f"the device's config says {s.role}: reading it again")
    if s.role == "active":
        if s.peer_role == "active" and mgmt_alive(s):
            return Decision("reread", "the peer claims to be active too: reading the device (the arbiter)")
        return Decision("stay", "active")
    mgmt = "the peer's agent is silent" if s.heard_ms is None or s.heard_ms > s.detect_ms else (
        "the peer says its data path is down" if s.peer_dataplane is False else "")
    if s.bfd is None:
        return Decision("stay", "standby; cannot tell or take over: this server's Open vSwitch is not running")
    if s.bfd or not mgmt:
        alive = [p for p, up in (("BFD", s.bfd), ("the management network", not mgmt)) if up]
        return Decision("stay", "standby; the active is alive on " + " and ".join(alive))
    if not s.own_trunk_up:
        return Decision("stay", f"{mgmt} and BFD is down, but this server's own trunk is down too: not taking over")
    if not s.armed:
        return Decision("stay", f"{mgmt} and BFD is down, but the active has not been seen healthy since this "
                                "server's role changed: not taking over")
    if s.peer_busy and s.heard_ms is not None and s.heard_ms <= s.detect_ms:
        return Decision("stay", f"{mgmt} and BFD is down, but the active runs `{s.peer_busy}`: not taking over")
    return Decision("fence", f"{mgmt} and BFD on the heartbeat VLAN is down")
