"""What a server of an active/standby pair records about the pair, beside ``state.json`` (typed, atomic, 0600).

* ``<state dir>/ha.json`` (:class:`HaRecord`): per switch its role as the device last said, when the device was
  read, the last failover with its time split, and where the replicated state came from. Written under the state
  lock by whoever changes a role (a failover, a role re-read, a replication).
* ``<state dir>/ha-agent.json`` (:class:`AgentView`): the running agent's live view (peer heard, BFD per switch,
  its own data path, the last decision per switch), rewritten by the agent alone, at most every
  :data:`AGENT_WRITE_S` s and on every change; ``harmless status`` reads both.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harmless import state as st

#: the agent rewrites ha-agent.json at least this often (s) while it runs, so its age shows whether it runs
AGENT_WRITE_S = 2.0


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Failover(_M):
    """One take-over: who, why, and what it cost (ms; None where the step did not happen).

    Attributes:
        time: UTC ISO time it began; by: ``agent`` (automatic) or ``operator`` (``harmless failover``).
        switches: the switches moved; from_server / to_server: the old and new active.
        reason: why (the decision's line, or the operator's ``--reason``).
        detect_ms: from the first sign the agent saw (BFD down, the peer's heartbeat missing for the detection
            time, or the peer saying its data path is down) to the decision; the signs themselves come after the
            fault by up to the detection time (``harmless ha demo`` measures from the fault).
        commit_ms: the fencing commit on the device(s) (connect, candidate, commit).
        activate_ms: from the commit until this server's br-of was given its controllers (telling the other server,
            the journal).
        controller_ms: from then until ovs-vswitchd logged a controller connection on every br-of (the OVSDB
            transaction and the TCP connection; None: none in time).
        outcome: ``done``, or ``failed: <error>``.
        decided_at / committed_at / activated_at / controller_at: the same moments as epoch seconds (ms
            precision), for lining them up with other clocks (``harmless ha demo``'s ping timeline).
    """

    time: str
    by: str
    switches: list[str]
    from_server: str
    to_server: str
    reason: str
    detect_ms: float | None = None
    commit_ms: float | None = None
    activate_ms: float | None = None
    controller_ms: float | None = None
    outcome: str = "done"
    decided_at: float | None = None
    committed_at: float | None = None
    activated_at: float | None = None
    controller_at: float | None = None


class HaRecord(_M):
    """``ha.json``: this server's record of the pair.

    Attributes:
        server / peer: the two names; roles: per switch ``active``/``standby``/``neither``/``both`` (the device's
        config, read at ``read_at``); last_failover: the most recent take-over (by either server, as far as this
        one knows); replicated_from / replicated_at / journal: where and when the state was last replicated from, and
        the peer's journal position then (``{"op", "seq", "file"}``).
    """

    server: str
    peer: str
    roles: dict[str, str] = Field(default_factory=dict)
    read_at: str | None = None
    last_failover: Failover | None = None
    replicated_from: str | None = None
    replicated_at: str | None = None
    journal: dict | None = None


class AgentView(_M):
    """``ha-agent.json``: the agent's live view (see the module doc).

    Attributes:
        pid / started / updated: the agent process and its last write (UTC ISO).
        peer_heard_ms: ms since the peer's last authentic heartbeat when written (None: never).
        peer: the peer's last heartbeat body (roles, data path per switch).
        bfd: per switch BFD forwarding on this server's heartbeat port (None: cannot tell).
        dataplane: per switch this server's own data path (ovs-vswitchd running and trunk link up).
        decisions: per switch the last decision's line.
        staged: the switches whose take-over candidate is staged on the device (:mod:`harmless.ha.stage`).
    """

    pid: int
    started: str
    updated: str
    peer_heard_ms: float | None = None
    peer: dict = Field(default_factory=dict)
    bfd: dict[str, bool | None] = Field(default_factory=dict)
    dataplane: dict[str, bool] = Field(default_factory=dict)
    decisions: dict[str, str] = Field(default_factory=dict)
    staged: list[str] = Field(default_factory=list)


def now_iso() -> str:
    """UTC now as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _path(name: str) -> Path:
    return st.state_dir() / name


def _read(name: str, model):
    """The model in ``<state dir>/name``, or None when missing or unreadable (a torn file is rewritten soon)."""
    try:
        return model.model_validate(json.loads(_path(name).read_text()))
    except (OSError, ValueError, ValidationError):
        return None


def load() -> HaRecord | None:
    """This server's ``ha.json``, or None."""
    return _read("ha.json", HaRecord)


def save(rec: HaRecord) -> None:
    """Write ``ha.json`` atomically (0600). Raises StateWriteError."""
    st.write_private(_path("ha.json"), rec.model_dump_json(indent=2))


def clear() -> None:
    """Forget the pair's record (after ``down``); the last failover stays in the archived journals."""
    for name in ("ha.json",):
        try:
            _path(name).unlink()
        except FileNotFoundError:
            pass


def load_agent() -> AgentView | None:
    """The running (or last) agent's ``ha-agent.json``, or None."""
    return _read("ha-agent.json", AgentView)


def save_agent(view: AgentView) -> None:
    """Write ``ha-agent.json`` atomically (0600). Raises StateWriteError."""
    st.write_private(_path("ha-agent.json"), view.model_dump_json(indent=2))
