"""This server's view of its active/standby pair for ``harmless status`` and ``harmless ha status`` (read only:
``ha.json`` and the agent's ``ha-agent.json``, no device or peer contacted)."""
from __future__ import annotations

import calendar
import time

from harmless.ha import record


def _age_s(iso: str | None) -> float | None:
    """Seconds since a UTC ``YYYY-MM-DDTHH:MM:SSZ`` time (None when unknown)."""
    if not iso:
        return None
    try:
        return max(0.0, time.time() - calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def peer_health(view: record.AgentView | None, detect_ms: float | None = None) -> str:
    """One phrase on the peer as the agent last saw it (and whether the agent itself runs)."""
    if view is None:
        return "no agent has run here (harmless ha agent)"
    age = _age_s(view.updated)
    if age is None or age > 3 * record.AGENT_WRITE_S + 1:
        return f"this server's agent is not running (last seen {view.updated})"
    if view.peer_heard_ms is None:
        return "never heard (its agent or the management network is down)"
    dp = view.peer.get("dataplane") or {}
    broken = [n for n, ok in dp.items() if not ok]
    state = "alive" if detect_ms is None or view.peer_heard_ms <= detect_ms else "silent"
    return f"{state}, heard {view.peer_heard_ms:.0f} ms ago" + (
        f", says its data path is down for {', '.join(broken)}" if broken else "")


def pair_view() -> dict | None:
    """``{"server", "peer", "roles", "read_at", "peer_health", "bfd", "dataplane", "decisions", "last_failover",
    "replicated_from", "replicated_at", "agent"}``, or None when this server has no pair record."""
    rec = record.load()
    if rec is None:
        return None
    view = record.load_agent()
    bfd = {n: ("up" if v else "down" if v is False else "-") for n, v in (view.bfd if view else {}).items()}
    return {"server": rec.server, "peer": rec.peer, "roles": rec.roles, "read_at": rec.read_at,
            "peer_health": peer_health(view), "bfd": bfd, "dataplane": view.dataplane if view else {},
            "decisions": view.decisions if view else {},
            "last_failover": rec.last_failover.model_dump(mode="json") if rec.last_failover else None,
            "replicated_from": rec.replicated_from, "replicated_at": rec.replicated_at,
            "agent": {"pid": view.pid, "updated": view.updated} if view else None}
