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

from harmless.otc.flows import Flow
from harmless.pipelines.oshi.model import ServiceRecord, ServiceRequest, Topology
from harmless.pipelines.oshi.services import (ServiceError, new_id, plan_service, reroute, service_flows,
                                              vbp_del_vsctl, vbp_vsctl)

log = logging.getLogger(__name__)
STATE_VERSION = 1


class Installer(Protocol):
    """Side effects on the nodes. Every method raises on failure (any Exception)."""

    def install(self, node: str, flows: list[Flow]) -> None:
        """Add ``flows`` on ``node`` and wait until the switch confirmed them (barrier)."""

    def delete_cookie(self, node: str, cookie: int) -> None:
        """Delete every flow with exactly ``cookie`` in every table of ``node``."""

    def vsctl(self, node: str, args: list[str]) -> None:
        """Run one ovs-vsctl transaction against ``node``'s OVSDB."""


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
    def create(self, body: dict) -> ServiceRecord:
        """Create a service from a request body (see :class:`ServiceRequest`). Raises ServiceError."""
        try:
            req = ServiceRequest.model_validate(body)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "body"
            raise ServiceError(where, first["msg"], "see harmless oshi service create --help") from None
        topo: Topology = self.topology()
        sid = new_id(list(self.records.values()), self.next_id)
        rec = plan_service(req, topo, list(self.records.values()), sid, self.label_range, self.rng)
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

    def restore_node(self, node: str) -> int:
        """(Re)install the flows and VBPs of every service on ``node`` (after connect). Returns the flow count."""
        topo = self.topology()
        n = 0
        for rec in self.list():
            for v in rec.vbps:
                if v.node == node:
                    self.installer.vsctl(node, vbp_vsctl(rec, v, topo.nodes[node].bridge))
            flows = service_flows(rec).get(node, [])
            if flows:
                self.installer.install(node, flows)
                n += len(flows)
        return n

    def topology_changed(self) -> list[dict]:
        """Re-route every service that crosses a link that is gone. Returns one event per re-routed service
        (``{"service", "at", "ok", "error"?}``), also kept in :attr:`events`."""
        topo = self.topology()
        out = []
        for rec in self.list():
            try:
                new = reroute(rec, topo, self.list(), self.label_range)
            except ServiceError as e:
                ev = {"service": rec.name, "at": time.time(), "ok": False, "error": e.problem}
                out.append(ev)
                log.warning("cannot re-route %s: %s", rec.name, e.problem)
                continue
            if new is None:
                continue
            old_nodes = set(service_flows(rec))
            try:
                for node in sorted(old_nodes - set(service_flows(new))):
                    self.installer.delete_cookie(node, rec.cookie)
                for node, flows in sorted(service_flows(new).items()):
                    self.installer.delete_cookie(node, rec.cookie)
                    self.installer.install(node, flows)
                ok, err = True, None
            except Exception as e:  # noqa: BLE001
                ok, err = False, str(e)
            self.records[rec.name] = new
            self._save()
            ev = {"service": rec.name, "at": time.time(), "ok": ok}
            if err:
                ev["error"] = err
            out.append(ev)
            log.info("re-routed %s: %s", rec.name, [s.nodes for s in new.segments])
        self.events.extend(out)
        return out

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
