"""Service life cycle: create, list, delete, restore after a controller restart, re-route after a link failure.

The manager owns the persisted state (a JSON file, written atomically after every change) and drives the network
through an :class:`Installer` (the os-ken app in production, a recording fake in unit tests). Guarantees:
  * a rejected request changes nothing (validation and planning are pure and happen before any side effect);
  * a failed installation is rolled back (the service's cookie is deleted on every node it touched);
  * labels, VBP ports and service ids are derived from the persisted records, so a restart never reallocates
    anything a service still holds; on reconnect a node gets its services' flows again (same match, priority and
    cookie: an OpenFlow ADD of an existing flow keeps it and its counters).
"""
from __future__ import annotations

import json
import logging
import os
import random
import time
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from harmless.openflow import Flow
from harmless.pipelines.oshi.model import ServiceRecord, ServiceRequest, Topology
from harmless.pipelines.oshi.services import (ServiceError, new_id, plan_service, reroute, service_flows,
                                              vbp_del_vsctl, vbp_vsctl)

log = logging.getLogger(__name__)
STATE_VERSION = 1


def flow_key(f: Flow) -> tuple:
    """(table, priority, cookie, match) -- what identifies a flow in a switch's table (:meth:`Flow.key`; a flow read
    back from a switch gives the same key, :func:`harmless.openflow.stats_key`)."""
    return f.key()


class Installer(Protocol):
    """Side effects on the nodes. Every method raises on failure (any Exception)."""

    def install(self, node: str, flows: list[Flow]) -> None:
        """Add ``flows`` on ``node`` and wait until the switch confirmed them (barrier)."""

    def delete_cookie(self, node: str, cookie: int) -> None:
        """Delete every flow with exactly ``cookie`` in every table of ``node``."""

    def vsctl(self, node: str, args: list[str]) -> None:
        """Run one ovs-vsctl transaction against ``node``'s OVSDB."""

    def existing(self, node: str) -> set[tuple]:
        """:func:`flow_key` of every service flow (cookie prefix COOKIE_BASE) now on ``node``."""


class ServiceManager:
    """Args:
        state_file: JSON file of the services (created on first change).
        topology: callable returning the current :class:`Topology`.
        installer: see :class:`Installer`.
        label_range: (lo, hi) MPLS label space.
        seed: random seed for ``vss_mode=random`` (None = system randomness).
    """

    def __init__(self, state_file: Path, topology, installer: Installer, label_range: tuple[int, int] = (16, 1048575),
                 seed: int | None = None):
        self.state_file = Path(state_file)
        self.topology = topology
        self.installer = installer
        self.label_range = label_range
        self.rng = random.Random(seed)
        self.records: dict[str, ServiceRecord] = {}
        self.next_id = 1
        self.events: list[dict] = []
        self._load()

    # ------------------------------------------------------------------ persistence
    def _load(self) -> None:
        if not self.state_file.exists():
            return
        data = json.loads(self.state_file.read_text())
        self.next_id = int(data.get("next_id", 1))
        for r in data.get("services", []):
            rec = ServiceRecord.model_validate(r)
            self.records[rec.name] = rec

    def _save(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": STATE_VERSION, "next_id": self.next_id,
                                   "services": [r.model_dump(mode="json") for r in self.records.values()]},
                                  indent=1))
        os.replace(tmp, self.state_file)

    # ------------------------------------------------------------------ queries
    def list(self) -> list[ServiceRecord]:
        return sorted(self.records.values(), key=lambda r: r.id)

    def get(self, name: str) -> ServiceRecord:
        if name not in self.records:
            raise ServiceError("name", f"no service named {name!r}",
                               f"existing: {', '.join(sorted(self.records)) or '(none)'}", 404)
        return self.records[name]

    # ------------------------------------------------------------------ changes
    def create(self, body: dict, dry_run: bool = False) -> ServiceRecord:
        """Create a service from a request body (see :class:`ServiceRequest`); with ``dry_run`` only plan it.
        Raises ServiceError."""
        try:
            req = ServiceRequest.model_validate(body)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "body"
            raise ServiceError(where, first["msg"], "see harmless oshi service create --help") from None
        topo: Topology = self.topology()
        sid = new_id(list(self.records.values()), self.next_id)
        rec = plan_service(req, topo, list(self.records.values()), sid, self.label_range, self.rng)
        if dry_run:
            return rec
        try:
            self._apply(rec, topo)
        except Exception as e:  # noqa: BLE001 -- any installer failure is rolled back and reported
            self._remove(rec, topo, quiet=True)
            raise ServiceError(req.name, f"installing the service failed: {e}",
                               "see the controller log; nothing was kept", 500) from None
        self.records[rec.name] = rec
        self.next_id = sid + 1
        self._save()
        return rec

    def delete(self, name: str) -> ServiceRecord:
        """Delete a service: its flows (by cookie) on every node, its VBP bridges, its labels. Raises ServiceError."""
        rec = self.get(name)
        self._remove(rec, self.topology(), quiet=False)
        del self.records[name]
        self._save()
        return rec

    def restore_node(self, node: str) -> dict:
        """Audit ``node`` after it (re)connected: add the service flows it lacks, delete flows of services that no
        longer exist, (re)create its VBPs. Flows already there are left alone (counters and durations keep running).

        Returns ``{"present": n, "added": n, "stale_cookies_deleted": n}``.
        """
        topo = self.topology()
        want: list[Flow] = []
        for rec in self.list():
            for v in rec.vbps:
                if v.node == node:
                    self.installer.vsctl(node, vbp_vsctl(rec, v, topo.nodes[node].bridge))
            want += service_flows(rec).get(node, [])
        have = self.installer.existing(node)
        want_keys = {flow_key(f) for f in want}
        live = {r.cookie for r in self.records.values()}
        stale = sorted({k[2] for k in have} - live)
        # a live service with flows it no longer wants here (e.g. re-routed while this node was unreachable):
        # replace all of that service's flows on this node
        redo = sorted({k[2] for k in have if k[2] in live and k not in want_keys})
        for c in stale + redo:
            self.installer.delete_cookie(node, c)
        missing = [f for f in want if flow_key(f) not in have or f.cookie in redo]
        if missing:
            self.installer.install(node, missing)
        return {"present": len(want) - len(missing), "added": len(missing), "stale_cookies_deleted": len(stale),
                "services_replaced": len(redo)}

    def topology_changed(self) -> list[dict]:
        """Re-route every service that crosses a link that is gone. Returns one event per affected service
        (``{"service", "at", "ok", "error"?}``), also kept in :attr:`events`.

        The new records are saved first; then every (service, node) update runs through :attr:`run_parallel`, so
        that a node whose control channel is stalled (in-band control over the failed link) delays only its own
        update; a node that could not be updated is repaired by the audit when it reconnects.
        """
        topo = self.topology()
        out, jobs = [], []
        for rec in self.list():
            try:
                new = reroute(rec, topo, self.list(), self.label_range)
            except ServiceError as e:
                out.append({"service": rec.name, "at": time.time(), "ok": False, "error": e.problem})
                log.warning("cannot re-route %s: %s", rec.name, e.problem)
                continue
            if new is None:
                continue
            self.records[rec.name] = new
            self._save()
            log.info("re-routed %s: %s", rec.name, [s.nodes for s in new.segments])
            ev = {"service": rec.name, "ok": True, "paths": [s.nodes for s in new.segments]}
            out.append(ev)
            new_flows = service_flows(new)
            for node in sorted(set(service_flows(rec)) | set(new_flows)):
                jobs.append((ev, node, rec.cookie, new_flows.get(node, [])))

        def job(ev, node, cookie, flows):
            try:
                self.installer.delete_cookie(node, cookie)
                if flows:
                    self.installer.install(node, flows)
            except Exception as e:  # noqa: BLE001
                ev["ok"] = False
                ev.setdefault("failed_nodes", {})[node] = str(e)

        self.run_parallel([lambda j=j: job(*j) for j in jobs])
        for ev in out:
            ev.setdefault("at", time.time())
        self.events.extend(out)
        return out

    @staticmethod
    def run_parallel(thunks) -> None:
        """Run callables; sequentially here, concurrently in the controller (green threads)."""
        for t in thunks:
            t()

    # ------------------------------------------------------------------ helpers
    def _apply(self, rec: ServiceRecord, topo: Topology) -> None:
        for v in rec.vbps:
            self.installer.vsctl(v.node, vbp_vsctl(rec, v, topo.nodes[v.node].bridge))
        for node, flows in sorted(service_flows(rec).items()):
            self.installer.install(node, flows)

    def _remove(self, rec: ServiceRecord, topo: Topology, quiet: bool) -> None:
        errors = []
        for node in sorted(rec.nodes()):
            try:
                self.installer.delete_cookie(node, rec.cookie)
            except Exception as e:  # noqa: BLE001
                errors.append(f"{node}: {e}")
        for v in rec.vbps:
            try:
                self.installer.vsctl(v.node, vbp_del_vsctl(rec, v, topo.nodes[v.node].bridge))
            except Exception as e:  # noqa: BLE001
                errors.append(f"{v.node}: {e}")
        if errors and not quiet:
            raise ServiceError(rec.name, "could not remove everything: " + "; ".join(errors),
                               "reconnect the nodes and delete again", 500)
