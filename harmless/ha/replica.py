"""The state both servers of a pair need, copied to the standby before ``up`` reports success, and taken down with
``down`` from either server (docs/high-availability.md).

What is replicated (:func:`payload`): ``state.json`` (the plan, the switches' non-secret entries, what HARMLESS
owns), every deployed switch's original config with its SHA-256 and backup-index entry, and the active's journal
position. The standby stores it (:func:`store`: originals checked against their SHA-256 and kept under its own state
directory, the plan turned into its own view, its own OVS recorded), then builds its bridges as standby (same
datapath ids and OpenFlow port numbers, its own trunk, no controller) and answers what it did. A ``down`` on either
server gives the switches back, removes its own bridges and asks the other to remove its own (:func:`teardown`).
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from harmless import journal
from harmless import state as st
from harmless.deployment import ovs_ref, server_ovs, state_ovs
from harmless.errors import HarmlessError
from harmless.ha import record, wire
from harmless.ha.plan import peer_view
from harmless.inventory import Inventory, load_inventory, parse_agent
from harmless.otc import bridges
from harmless.plan import Plan
from harmless.state import DeploymentState, StateError


class HaError(HarmlessError):
    """The other server of the pair did not do what was asked (store the state, take its bridges down)."""


def digest(s: DeploymentState | None) -> str | None:
    """What both servers' states must agree on, as a short hash: the originals, what HARMLESS owns on each switch and
    every migrated port's VID (not the plan's view, which differs between the two); None without a deployment. An
    active server whose peer reports another digest replicates its state again. Pure."""
    if s is None or not s.plan:
        return None
    plan = Plan.from_dict(s.plan)
    doc = {"originals": {n: b.sha256 for n, b in sorted(s.backups.items())},
           "owned": {n: o.model_dump(mode="json") for n, o in sorted(s.owned.items())},
           "ports": {sp.name: sorted((p.ofport, p.vid) for p in sp.ports) for sp in plan.switches}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def payload(s: DeploymentState) -> dict:
    """What the active sends the standby after ``up`` (see the module doc).

    Raises:
        StateError: an original backup is missing or does not match its SHA-256.
    """
    index = st.backup_index()
    originals = []
    for name, ref in s.backups.items():
        entry = next((e for e in reversed(index) if e["switch"] == name and e["file"] == ref.file), None)
        text = st.read_backup({"file": ref.file, "sha256": ref.sha256})
        originals.append({"switch": name, "sha256": ref.sha256, "text": text,
                          "record": (entry or {}).get("record") or s.switches.get(name, {}),
                          "time": (entry or {}).get("time"), "copies": st.copies_of(name, ref.file)})
    recs = journal.unfinished()
    last = sorted((st.state_dir() / "journal").glob("*.jsonl"))[-1:] if (st.state_dir() / "journal").exists() else []
    pos = {"op": recs[0].get("op"), "seq": recs[-1].get("seq")} if recs else {"file": last[0].name if last else None}
    return {"state": s.model_dump(mode="json"), "originals": originals, "journal": pos, "time": record.now_iso()}


def client(inv: Inventory, me: str) -> tuple[tuple[str, int], wire.Sender, wire.Guard]:
    """The peer agent's address and this server's sender/guard for requests (the secret read from the inventory's
    reference). Raises InputError (secret)."""
    k = wire.key(inv.ha.secret("ha"))
    peer = inv.ha.peer(me).name
    return parse_agent(inv.ha.peer(me).agent), wire.Sender(me, peer, k), wire.Guard(me, peer, k)


def push(inv: Inventory, me: str, s: DeploymentState, progress=lambda m: None, timeout: float = 120) -> dict:
    """Replicate ``s`` to the other server's agent and wait for it to store it (``up``'s last step, ``harmless ha
    sync``).

    Returns:
        ``{"server", "replicated": True, "built", "problems", "roles"}`` as the standby answered.

    Raises:
        WireError: the standby's agent cannot be reached or its answer is not authentic.
        HaError: it answered that it could not store the state.
    """
    addr, sender, guard = client(inv, me)
    peer = inv.ha.peer(me).name
    progress(f"replicating the state to the standby {peer} ({addr[0]}:{addr[1]})")
    body = wire.request(addr, sender, guard, "replicate", payload(s), timeout=timeout)
    if body.get("error") or not body.get("stored"):
        raise HaError(f"standby {peer}", f"did not store the replicated state ({body.get('error', 'no reason')})",
                      "see its agent's log (journalctl -u harmless-ha-agent) and run harmless ha sync")
    if not body.get("built"):
        progress(f"standby {peer} stored the state but its bridges are not built: {'; '.join(body.get('problems', []))}")
    return {"server": peer, "replicated": True, "built": body.get("built", False),
            "problems": body.get("problems", []), "roles": body.get("roles", {})}


def after_up(inv: Inventory, me: str, s: DeploymentState, skip: bool, progress=lambda m: None) -> dict:
    """``up``'s last step on the active server: ``ha.json`` says it is active for every switch (the device carries
    the VLANs on its trunk now), then the state goes to the standby (:func:`push`) unless ``skip``
    (``--no-standby``).

    Returns:
        What the standby answered, or ``{"server", "replicated": False, "reason"}``.

    Raises:
        WireError / HaError: as :func:`push` (``up`` rolls back).
    """
    plan = Plan.from_dict(s.plan)
    peer = inv.ha.peer(me).name
    rec = record.load() or record.HaRecord(server=me, peer=peer)
    record.save(rec.model_copy(update={"roles": {sp.name: "standby" if sp.standby else "active"
                                                 for sp in plan.switches if sp.heartbeat_vid is not None},
                                       "read_at": record.now_iso()}))
    if skip:
        progress("--no-standby: the state is not replicated to the standby (harmless ha sync sends it later)")
        return {"server": peer, "replicated": False, "reason": "--no-standby"}
    return push(inv, me, s, progress)


def _store_originals(originals: list[dict]) -> dict[str, dict]:
    """Each original kept here (one file per distinct config; an identical active original is reused) with where its
    copies off the servers are (:func:`harmless.state.set_copies`, so a ``down`` here removes them too); returns
    ``{switch: {"file", "sha256"}}``.

    Raises:
        StateError: a received config does not match its SHA-256 (nothing of it is kept).
    """
    refs = {}
    for o in originals:
        if st.sha256(o["text"]) != o["sha256"]:
            raise StateError(f"original of {o['switch']}", "the replicated config does not match its SHA-256",
                             "run harmless up on the active server again")
        kept = st.active_original(o["switch"])
        if kept is not None and kept["sha256"] == o["sha256"]:
            refs[o["switch"]] = {"file": kept["file"], "sha256": kept["sha256"]}
        else:
            if kept is not None:
                st.mark_superseded(o["switch"], kept["file"])
            refs[o["switch"]] = st.save_backup(o["switch"], o["text"], role="original", record=o["record"])
        if o.get("copies") is not None:
            st.set_copies(o["switch"], refs[o["switch"]]["file"], o["copies"])
    return refs


def local_state(sent: DeploymentState, me: str, inv: Inventory, inventory_path: str,
                refs: dict[str, dict]) -> DeploymentState:
    """The received state as this server keeps it: its own view of the plan, its own OVS, its own inventory path and
    backup files. Pure but for nothing (``inv`` is this server's :func:`harmless.ha.plan.local_inventory`)."""
    plan = Plan.from_dict(sent.plan)
    mine = Plan(tuple(peer_view(sp, me) if sp.heartbeat_vid is not None and sp.server != me else sp
                      for sp in plan.switches))
    ovs = server_ovs(inv, start=False)
    return sent.model_copy(update={
        "plan": mine.to_dict(), "inventory": str(Path(inventory_path).resolve()),
        "backups": {n: st.BackupRef(**r) for n, r in refs.items()},
        "ovs": ovs_ref(ovs, inv.server.datapath), "updated": record.now_iso()})


def store(body: dict, me: str, peer: str, inv: Inventory, inventory_path: str, progress=lambda m: None) -> dict:
    """Keep what the active sent and build this server's bridges as its standby (the caller holds the state lock).

    Returns:
        ``{"stored": True, "built": bool, "problems": [str], "roles": {switch: role}}`` (the reply to the active).

    Raises:
        StateError / StateWriteError: it could not be kept (the reply then says so).
    """
    sent = DeploymentState.model_validate(body["state"])
    refs = _store_originals(body.get("originals", []))
    s = local_state(sent, me, inv, inventory_path, refs)
    for n, o in s.owned.items():          # beside each original too: down keeps the operator's changes without it
        if n in s.backups:
            st.set_owned(n, s.backups[n].file, o.model_dump(mode="json"))
    st.save(s)
    plan = Plan.from_dict(s.plan)
    roles = {sp.name: "standby" if sp.standby else "active" for sp in plan.switches}
    rec = record.load() or record.HaRecord(server=me, peer=peer)
    record.save(rec.model_copy(update={"roles": roles, "replicated_from": peer, "replicated_at": record.now_iso(),
                                       "journal": body.get("journal"), "read_at": body.get("time")}))
    problems: list[str] = []
    try:
        ovs = state_ovs(s)
        ovs.start()
        bridges.apply(ovs, plan)
        problems = bridges.verify(ovs, plan)
    except HarmlessError as e:
        problems = [str(e)]
    progress("replicated state from " + peer + (": bridges built as standby" if not problems else
                                                 f": bridges not built ({problems[0]})"))
    return {"stored": True, "built": not problems, "problems": problems[:5], "roles": roles}


def teardown_peer(s: DeploymentState, restored: dict[str, str], progress=lambda m: None) -> dict | None:
    """``down``'s step on one server of a pair: ask the other one to remove its bridges and forget the state,
    telling it which originals are proven back (``{switch: sha256}``). None without a pair; otherwise what happened,
    ``{"server", "reached": False, "error"}`` when it could not be reached (never raised: the switches are back)."""
    plan = Plan.from_dict(s.plan)
    sp = next((sp for sp in plan.switches if sp.heartbeat_vid is not None), None)
    if sp is None or not sp.server or not sp.peer:
        return None
    record.clear()                                  # this server's record of the pair
    try:
        inv = load_inventory(s.inventory)
        addr, sender, guard = client(inv, sp.server)
        progress(f"asking the other server {sp.peer} to remove its bridges")
        body = wire.request(addr, sender, guard, "teardown", {"restored": restored}, timeout=120)
    except HarmlessError as e:
        progress(f"could not reach the other server {sp.peer}: its bridges stay (run harmless down there): {e}")
        return {"server": sp.peer, "reached": False, "error": str(e)}
    if body.get("error"):
        return {"server": sp.peer, "reached": True, "error": body["error"]}
    return {"server": sp.peer, "reached": True, "removed": body.get("removed", []), "state": body.get("state")}


def teardown(body: dict, progress=lambda m: None) -> dict:
    """``down`` from the other server (the caller holds the state lock): the originals it proved back are marked
    restored here, this server's bridges are removed, its private OVS stopped and the state forgotten.

    Args:
        body: ``{"restored": {switch: sha256}}`` (the originals the other server proved back on the devices).

    Returns:
        ``{"removed": [what was done], "state": "cleared" | "none"}``.
    """
    s = st.load()
    done: list[str] = []
    for e in st.active_originals():
        if body.get("restored", {}).get(e["switch"]) == e["sha256"]:
            st.mark_restored(e["switch"], e["file"])
            done.append(f"original of {e['switch']} marked restored")
    if s is None:
        record.clear()
        return {"removed": done, "state": "none"}
    j = journal.Journal("down", progress)
    plan = Plan.from_dict(s.plan) if s.plan else Plan(())
    names = [sp.bridge for sp in plan.switches]
    j.record("down.begin", switches=[], bridges=names, from_peer=True)
    ovs = state_ovs(s)
    j.record("server.remove", bridges=names)
    if ovs.ovsdb_running() or (ovs.private and ovs.vswitchd_running()):
        if ovs.private:
            ovs.start()
        bridges.remove(ovs, names)
        done.append("bridges removed")
        if ovs.private:
            ovs.stop()
            done.append("private Open vSwitch stopped")
    j.record("server.removed")
    j.record("state.clear")
    st.clear()
    record.clear()
    j.record("down.end")
    j.close()
    return {"removed": done, "state": "cleared", "time": time.time()}


def tell_fenced(inventory_path: str, me: str, names: list[str], timeout: float = 1.0) -> bool:
    """Tell the other server's agent that this one took ``names`` over (it drops their controllers at once); False
    when it cannot be reached (it reads the devices when it is back)."""
    if not names:
        return True
    try:
        inv = load_inventory(inventory_path)
        addr, sender, guard = client(inv, me)
        wire.request(addr, sender, guard, "fenced", {"switches": sorted(names)}, timeout=timeout)
        return True
    except HarmlessError:
        return False
