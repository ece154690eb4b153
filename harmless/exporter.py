"""``harmless exporter``: Prometheus metrics of a HARMLESS deployment (prometheus_client, text format 0.0.4).

Every scrape reads the state (``state.json``, the journal) and OVS (``ovs-ofctl dump-ports``/``dump-ports-desc``,
OVSDB ``Controller`` rows, br-otc's translator flows) afresh; it takes no lock and changes nothing. What only the
legacy switch knows (its link states and counters) is read by a background poller every ``device_interval`` seconds
(one NAPALM session per switch, kept open, reopened after an error) and served from that cache, so a scrape never
waits for a device. Label ``side`` says where a counter was taken: ``br_of`` (the OpenFlow port on br-of, i.e. what
the controller's pipeline saw) or ``device`` (the legacy access port on the switch).

Metrics (all prefixed ``harmless_``):

=========================================== ======= =============================================================
name                                        type    labels / meaning
=========================================== ======= =============================================================
``deployed``                                gauge   1 when a plan is deployed (state.json has one)
``port_packets_total``                      counter switch, interface, ofport, side, direction (rx/tx)
``port_bytes_total``                        counter same labels; bytes
``port_dropped_total``                      counter same labels; drops (br_of: OVS drop counter; device: discards)
``port_link_up``                            gauge   switch, interface, ofport, source (device / br_of): 1 up, 0 down
``port_blocked_by_watch``                   gauge   switch, interface, ofport: 1 while ``watch`` holds it link-down
``port_admin_down``                         gauge   switch, interface, ofport, side: br_of 1 while a controller
                                                    holds the port down (OFPPC_PORT_DOWN); device 1 while HARMLESS
                                                    holds the legacy port shut for it (docs/link-state.md)
``port_speed_mbps``                         gauge   switch, interface, ofport: the legacy port's speed as the device
                                                    reports it (NAPALM ``get_interfaces``), which br-of's patch port
                                                    cannot carry (docs/transparency.md)
``controller_connected``                    gauge   switch, bridge, target: 1 connected
``controller_role``                         gauge   switch, target, role (master/slave/other): always 1 (info)
``translator_flows``                        gauge   switch: its translator flows present on br-otc
``translator_flows_expected``               gauge   switch: how many the plan has
``last_run_timestamp_seconds``              gauge   switch, op (up/down): end of the last run that included it
``last_run_success``                        gauge   switch, op: 1 when that run ended well for the switch
``journal_unfinished``                      gauge   switch: 1 when an interrupted run's journal names it (all
                                                    deployed switches otherwise 0); ``switch="*"``: any journal
``device_poll_success``                     gauge   switch: 1 when the last device poll answered
``device_poll_timestamp_seconds``           gauge   switch: when it answered
``device_as_deployed``                      gauge   switch: 1 when the device's ports and trunks are as HARMLESS
                                                    deployed them, 0 when they differ (left out: not read)
``device_difference``                       gauge   switch, kind, interface, fix: 1 per difference
                                                    (:func:`harmless.conformance.check`; ``fix`` what to type)
``pmd_cycles_total``                        counter pmd, kind (busy/idle): PMD thread cycles (OVS-DPDK only)
``pmd_busy_percent``                        gauge   pmd: busy / (busy + idle) cycles since the previous scrape, %
``exporter_scrape_errors``                  gauge   part: errors in the last scrape (details in the log)
=========================================== ======= =============================================================

Log lines (stderr, i.e. the systemd journal) about one switch start with ``<switch>:``.
"""
from __future__ import annotations

import calendar
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import ProcessCollector, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

from harmless import conformance, deployment, journal
from harmless import state as st
from harmless.errors import HarmlessError, InputError
from harmless.health import expected_translator_flows, translator_flows_present
from harmless.linkwatch import Sessions
from harmless.linkwatch import parse_listen as _parse_listen
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.ovsstats import parse_pmd_stats
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState
from harmless.switch_drivers.portmodel import SwitchModel

log = logging.getLogger("harmless.exporter")

#: default listen address; 9478 is not in the Prometheus default port allocations list (checked by hand), change it
#: with --listen if it clashes with something on your server
DEFAULT_LISTEN = "127.0.0.1:9478"
#: seconds between device polls (NAPALM get_interfaces + get_interfaces_counters over SSH: 0.2-2 s per switch)
DEFAULT_DEVICE_INTERVAL = 30.0
#: archived journals read for the last up/down per switch (newest first)
JOURNALS_READ = 50

_COUNTER_FIELDS = {"pkts": "packets", "bytes": "bytes", "drop": "dropped", "errs": "errors"}


def parse_port_counters(text: str) -> dict[int, dict[str, int]]:
    """Parse ``ovs-ofctl dump-ports BRIDGE`` into ``{port: {"rx_packets", "rx_bytes", "rx_dropped", "rx_errors",
    "tx_...": int}}``. A ``?`` (not counted by that port type) leaves the field out; LOCAL is skipped. Pure."""
    out: dict[int, dict[str, int]] = {}
    cur: int | None = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"port\s+\"?([^:\"]+)\"?:\s*(.*)$", s)
        if m:
            cur = int(m.group(1)) if m.group(1).strip().isdigit() else None
            s = m.group(2)
            if cur is not None:
                out[cur] = {}
        if cur is None:
            continue
        m = re.match(r"(rx|tx)\s+(.*)$", s)
        if not m:
            continue
        for kv in m.group(2).split(","):
            k, _, v = kv.strip().partition("=")
            if k in _COUNTER_FIELDS and v.isdigit():
                out[cur][f"{m.group(1)}_{_COUNTER_FIELDS[k]}"] = int(v)
    return out


def last_runs(journal_dir: Path, limit: int = JOURNALS_READ) -> dict[tuple[str, str], tuple[float, bool]]:
    """The last ``up`` and ``down`` of each switch from the archived journals: ``{(switch, op): (end time as
    UNIX seconds, success)}``.

    An ``up`` succeeded for a switch when the run ended with ``up.end`` and the switch's commit (if any) finished
    (``device.committed``); a ``down`` when it ended with ``down.end``. Rolled-back and interrupted runs count as
    failures. Unreadable files are skipped.
    """
    out: dict[tuple[str, str], tuple[float, bool]] = {}
    try:
        files = sorted(journal_dir.glob("*.jsonl"), reverse=True)[:limit]
    except OSError:
        return out
    for f in files:
        try:
            recs = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        except (OSError, ValueError):
            continue
        if not recs or recs[0].get("op") not in ("up", "down"):
            continue
        op = recs[0]["op"]
        try:
            t_end = float(calendar.timegm(time.strptime(recs[-1]["t"], "%Y-%m-%dT%H:%M:%SZ")))
        except (KeyError, ValueError):
            continue
        ended = recs[-1].get("step") == f"{op}.end" and not any(r.get("step") == "rollback.begin" for r in recs)
        for sw in recs[0].get("switches") or []:
            if (sw, op) in out:
                continue                      # a newer run already set it
            ok = ended
            if op == "up":
                steps = {r.get("step") for r in recs if r.get("switch") == sw}
                ok = ended and ("device.commit" not in steps or "device.committed" in steps)
            out[(sw, op)] = (t_end, ok)
    return out


@dataclass
class DeviceSnapshot:
    """One switch's last device poll (:class:`DevicePoller`).

    Attributes:
        links: ``{interface: "up" | "down" | "admin-down"}`` (driver ``link_states()``; empty when not supported).
        speeds: ``{interface: Mbit/s}`` (driver ``port_properties()``; empty when not supported, 0 unknown).
        counters: ``{interface: {"rx_packets", "rx_bytes", "rx_dropped", ..., "tx_...": int}}`` (driver
            ``interface_counters()``; empty when not supported).
        ok: the last poll answered.
        t: when the device last answered (UNIX s; 0.0: never).
        model: the switch's port model (driver ``port_model()``; None when not supported or not read), which a
            scrape compares with the deployed plan (:func:`harmless.conformance.check`).
    """

    links: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)
    ok: bool = False
    t: float = 0.0
    model: SwitchModel | None = None
    speeds: dict = field(default_factory=dict)


class DevicePoller:
    """Reads every deployed switch's link states and counters every ``interval`` seconds (a daemon thread).

    Results: :attr:`results` ``{switch: DeviceSnapshot}``. Sessions are kept open between polls and reopened after
    an error (:class:`harmless.linkwatch.Sessions`).
    """

    def __init__(self, interval: float = DEFAULT_DEVICE_INTERVAL):
        self.interval = interval
        self.results: dict[str, DeviceSnapshot] = {}
        self._sessions = Sessions()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._logged: dict[str, list[conformance.Difference]] = {}   # differences already logged, per switch

    def poll_once(self) -> None:
        """One round over the deployed switches (the state is read afresh)."""
        try:
            s = st.load()
        except HarmlessError as e:
            log.warning("state: %s", e)
            return
        names = [sp["name"] for sp in (s.plan or {}).get("switches", [])] if s else []
        for name in self._sessions.names():
            if name not in names:
                self._sessions.drop(name)
        for name in names:
            if name not in s.switches:
                continue
            res = self._poll(s, name)
            if res.model is not None:
                self._log_differences(s, name, res.model)
            with self._lock:
                self.results[name] = res

    def _log_differences(self, s: DeploymentState, name: str, model: SwitchModel) -> None:
        """Log each difference between the switch and its deployment once when it appears (warning, with the fix)
        and once when it is gone."""
        now = conformance.check(Plan.from_dict(s.plan).switch(name), model, s.inventory)
        before = self._logged.get(name, [])
        self._logged[name] = now
        for f in now:
            if f not in before:
                log.warning("%s", f.line())
        for f in before:
            if f not in now:
                log.info("%s: as deployed again: %s (%s)", name, f.interface or "the switch", f.expected)

    def _poll(self, s: DeploymentState, name: str) -> DeviceSnapshot:
        """One switch's poll; any failure (driver, bad record) shows as ``ok`` False, never ends the thread."""
        res = DeviceSnapshot()
        try:
            drv = self._sessions.get(s, name)
            try:
                props = drv.port_properties()
                res.links = {n: p["link"] for n, p in props.items()}
                res.speeds = {n: p["speed_mbps"] for n, p in props.items()}
            except NotImplementedError:
                try:
                    res.links = drv.link_states()
                except NotImplementedError:
                    pass
            try:
                res.counters = drv.interface_counters()
            except NotImplementedError:
                pass
            try:
                res.model = drv.port_model()
            except NotImplementedError:
                pass
            except Exception as e:  # noqa: BLE001 - the config check must not cost the link states and counters
                log.warning("%s: configuration not checked (%s)", name, e)
            res.ok, res.t = True, time.time()
        except Exception as e:  # noqa: BLE001 - any failure (driver, bad record) must show as ok=0, not end the thread
            log.warning("%s: device poll failed: %s", name, e)
            self._sessions.drop(name)
            last = self.results.get(name)
            res.t = last.t if last is not None else 0.0     # when it last answered
        return res

    def snapshot(self) -> dict[str, DeviceSnapshot]:
        with self._lock:
            return dict(self.results)

    def run(self) -> None:
        """Poll until :meth:`stop`."""
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self.interval)
        self._sessions.close_all()

    def start(self) -> threading.Thread:
        t = threading.Thread(target=self.run, name="harmless-device-poller", daemon=True)
        t.start()
        return t

    def stop(self) -> None:
        self._stop.set()


_PORT_LABELS = ["switch", "interface", "ofport", "side", "direction"]
#: the metric families of one scrape: ``{key: (family class, name, help, labels)}`` (the module doc lists them)
_FAMILIES: dict[str, tuple[type, str, str, list[str]]] = {
    "deployed": (GaugeMetricFamily, "harmless_deployed", "1 when a HARMLESS plan is deployed", []),
    "packets": (CounterMetricFamily, "harmless_port_packets", "packets per migrated port", _PORT_LABELS),
    "bytes": (CounterMetricFamily, "harmless_port_bytes", "bytes per migrated port", _PORT_LABELS),
    "dropped": (CounterMetricFamily, "harmless_port_dropped", "drops per migrated port", _PORT_LABELS),
    "link": (GaugeMetricFamily, "harmless_port_link_up", "1 when the link is up, 0 when down",
             ["switch", "interface", "ofport", "source"]),
    "blocked": (GaugeMetricFamily, "harmless_port_blocked_by_watch",
                "1 while harmless watch holds the br-of port link-down", ["switch", "interface", "ofport"]),
    "admin": (GaugeMetricFamily, "harmless_port_admin_down",
              "1 while a controller holds the port down (side br_of) or HARMLESS holds the legacy port shut for it "
              "(side device)", ["switch", "interface", "ofport", "side"]),
    "speed": (GaugeMetricFamily, "harmless_port_speed_mbps", "the legacy port's speed as the device reports it",
              ["switch", "interface", "ofport"]),
    "ctl": (GaugeMetricFamily, "harmless_controller_connected", "1 when the controller is connected",
            ["switch", "bridge", "target"]),
    "role": (GaugeMetricFamily, "harmless_controller_role", "the controller's OpenFlow role (info, always 1)",
             ["switch", "target", "role"]),
    "flows": (GaugeMetricFamily, "harmless_translator_flows", "translator flows of the switch on br-otc",
              ["switch"]),
    "flows_exp": (GaugeMetricFamily, "harmless_translator_flows_expected",
                  "translator flows the plan has for the switch", ["switch"]),
    "run_t": (GaugeMetricFamily, "harmless_last_run_timestamp_seconds",
              "end of the last up/down that included the switch", ["switch", "op"]),
    "run_ok": (GaugeMetricFamily, "harmless_last_run_success", "1 when that run ended well for the switch",
               ["switch", "op"]),
    "unfinished": (GaugeMetricFamily, "harmless_journal_unfinished",
                   "1 when an interrupted run's journal names the switch (switch=* any)", ["switch"]),
    "dev_ok": (GaugeMetricFamily, "harmless_device_poll_success", "1 when the last device poll answered",
               ["switch"]),
    "dev_t": (GaugeMetricFamily, "harmless_device_poll_timestamp_seconds",
              "when the device last answered a poll (0: never)", ["switch"]),
    "as_dep": (GaugeMetricFamily, "harmless_device_as_deployed",
               "1 when the switch's ports and trunks are as HARMLESS deployed them, 0 when they differ", ["switch"]),
    "diff": (GaugeMetricFamily, "harmless_device_difference",
             "1 per way the switch differs from its deployment; fix: what to type",
             ["switch", "kind", "interface", "fix"]),
    "pmd_c": (CounterMetricFamily, "harmless_pmd_cycles", "OVS-DPDK PMD thread cycles", ["pmd", "kind"]),
    "pmd_b": (GaugeMetricFamily, "harmless_pmd_busy_percent",
              "PMD busy cycles / all cycles since the previous scrape (%)", ["pmd"]),
}


def _families() -> dict:
    """Fresh, empty metric families of one scrape (:data:`_FAMILIES`)."""
    return {k: cls(name, doc, labels=labels) if labels else cls(name, doc)
            for k, (cls, name, doc, labels) in _FAMILIES.items()}


class HarmlessCollector(Collector):
    """The prometheus_client collector: one consistent set of metric families per scrape (see the module doc).

    Args:
        devices: the :class:`DevicePoller` whose cached device results are exported (None: no device metrics).
    """

    def __init__(self, devices: DevicePoller | None = None):
        self.devices = devices
        self._pmd_prev: dict[str, tuple[float, float]] = {}

    def collect(self) -> Iterator:
        errors: dict[str, int] = {"state": 0, "ovs": 0, "journal": 0, "pmd": 0}
        fam = _families()
        s = None
        try:
            s = st.load()
        except HarmlessError as e:
            log.warning("state: %s", e)
            errors["state"] += 1
        plan = Plan.from_dict(s.plan) if s and s.plan else None
        fam["deployed"].add_metric([], 1 if plan else 0)
        devices = self.devices.snapshot() if self.devices else {}
        try:
            _journal_metrics(fam, plan)
        except (HarmlessError, OSError) as e:
            log.warning("journal: %s", e)
            errors["journal"] += 1
        if plan is not None:
            self._deployment_metrics(fam, s, plan, devices, errors)
        yield from fam.values()
        err = GaugeMetricFamily("harmless_exporter_scrape_errors", "errors in the last scrape (see the log)",
                                labels=["part"])
        for part, n in errors.items():
            err.add_metric([part], n)
        yield err

    def _deployment_metrics(self, fam: dict, s: DeploymentState, plan: Plan, devices: dict[str, DeviceSnapshot],
                            errors: dict[str, int]) -> None:
        """Translator flows, per-switch and per-port metrics of the deployed plan, PMD metrics on OVS-DPDK."""
        ovs = deployment.state_ovs(s)
        try:
            present = translator_flows_present(ovs, plan)
        except HarmlessError as e:
            log.warning("br-otc: %s", e)
            present, errors["ovs"] = {}, errors["ovs"] + 1
        expected = expected_translator_flows(plan)
        for sp in plan.switches:
            fam["flows_exp"].add_metric([sp.name], len(expected[sp.name]))
            if sp.name in present:
                fam["flows"].add_metric([sp.name], present[sp.name])
            _switch_metrics(fam, ovs, sp, devices.get(sp.name), errors, s.inventory, s.port_admin.get(sp.name, {}))
        if s.ovs is not None and s.ovs.datapath == "dpdk":
            try:
                self._pmd(fam, ovs)
            except HarmlessError as e:
                log.warning("pmd-stats-show: %s", e)
                errors["pmd"] += 1

    def _pmd(self, fam: dict, ovs: Ovs) -> None:
        """PMD cycles (``ovs-appctl dpif-netdev/pmd-stats-show``) and busy % since the previous scrape."""
        for t in parse_pmd_stats(ovs.appctl("dpif-netdev/pmd-stats-show", timeout=10)):
            if t.core is None:
                continue                       # the main thread is no PMD
            busy, idle = float(t.processing_cycles), float(t.idle_cycles)
            fam["pmd_c"].add_metric([t.thread, "busy"], busy)
            fam["pmd_c"].add_metric([t.thread, "idle"], idle)
            pb, pi = self._pmd_prev.get(t.thread, (0.0, 0.0))
            if busy < pb or idle < pi:        # counters were cleared (pmd-stats-clear) or OVS restarted
                pb, pi = 0.0, 0.0
            total = (busy - pb) + (idle - pi)
            if total > 0:
                fam["pmd_b"].add_metric([t.thread], 100.0 * (busy - pb) / total)
            self._pmd_prev[t.thread] = (busy, idle)


def _journal_metrics(fam: dict, plan: Plan | None) -> None:
    """An unfinished journal (per switch it names or deploys, and ``*``) and the last up/down per switch.

    Raises:
        HarmlessError, OSError: the journal cannot be read.
    """
    recs = journal.unfinished()
    pending = recs if recs and not journal.is_finished(recs) else None
    named = set(journal.touched_switches(pending or []))
    if pending:
        named |= set(pending[0].get("switches") or [])
    fam["unfinished"].add_metric(["*"], 1 if pending else 0)
    for name in sorted(named | {sp.name for sp in (plan.switches if plan else ())}):
        fam["unfinished"].add_metric([name], 1 if name in named else 0)
    for (name, op), (t_end, ok) in sorted(last_runs(st.state_dir() / "journal").items()):
        fam["run_t"].add_metric([name, op], t_end)
        fam["run_ok"].add_metric([name, op], 1 if ok else 0)


def _switch_metrics(fam: dict, ovs: Ovs, sp: SwitchPlan, dev: DeviceSnapshot | None, errors: dict[str, int],
                    inventory: str, shut: dict[str, dict] | None = None) -> None:
    """One switch's controllers, device poll, differences from its deployment and per-port metrics (its br-of read
    once; ``shut``: the legacy ports HARMLESS holds shut for a controller, ``state.port_admin[switch]``)."""
    try:
        ps = bridges.port_status(ovs, sp)
        counters = parse_port_counters(ovs.ofctl("-O", "OpenFlow13", "dump-ports", sp.bridge, timeout=10))
    except HarmlessError as e:
        log.warning("%s: %s: %s", sp.name, sp.bridge, e)
        errors["ovs"] += 1
        ps, counters = {"ports": {}, "controllers": []}, {}
    for c in ps["controllers"]:
        fam["ctl"].add_metric([sp.name, sp.bridge, c["target"]], 1 if c["is_connected"] else 0)
        fam["role"].add_metric([sp.name, c["target"], c["role"]], 1)
    if dev is not None:
        fam["dev_ok"].add_metric([sp.name], 1 if dev.ok else 0)
        fam["dev_t"].add_metric([sp.name], dev.t)
    if dev is not None and dev.ok and dev.model is not None:
        held = {p.ofport for p in sp.ports if (ps["ports"].get(p.ofport) or {}).get("blocked_by_watch")}
        found = conformance.check(sp, dev.model, inventory, links=dev.links if ps["ports"] else None, held=held)
        fam["as_dep"].add_metric([sp.name], 0 if found else 1)
        for f in found:
            fam["diff"].add_metric([sp.name, f.kind, f.interface or "", f.fix], 1)
    for p in sp.ports:
        _port_metrics(fam, sp.name, p.interface, p.ofport, counters.get(p.ofport, {}), ps["ports"].get(p.ofport),
                      dev)
        fam["admin"].add_metric([sp.name, p.interface, str(p.ofport), "device"], 1 if p.interface in (shut or {})
                                else 0)


def _port_metrics(fam: dict, switch: str, interface: str, ofport: int, br_of: dict[str, int], info: dict | None,
                  dev: DeviceSnapshot | None) -> None:
    """Add one migrated port's counters and link states (br-of side, and the device's when polled)."""
    lab = [switch, interface, str(ofport)]
    sides = {"br_of": br_of}
    if dev is not None and dev.ok and interface in dev.counters:
        sides["device"] = dev.counters[interface]
    for side, c in sides.items():
        for d in ("rx", "tx"):
            for key in ("packets", "bytes", "dropped"):
                if f"{d}_{key}" in c:
                    fam[key].add_metric([*lab, side, d], c[f"{d}_{key}"])
    if info is not None:
        fam["link"].add_metric([*lab, "br_of"], 1 if "LIVE" in info["br_of_state"].split() else 0)
        fam["blocked"].add_metric(lab, 1 if info["blocked_by_watch"] else 0)
        fam["admin"].add_metric([*lab, "br_of"], 1 if info.get("admin_down") else 0)
    if dev is not None and dev.ok and interface in dev.links:
        fam["link"].add_metric([*lab, "device"], 1 if dev.links[interface] == "up" else 0)
    if dev is not None and dev.ok and dev.speeds.get(interface):
        fam["speed"].add_metric(lab, dev.speeds[interface])


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port) for ``--listen`` (raises InputError naming ``--listen``)."""
    try:
        return _parse_listen(text)
    except InputError:
        raise InputError("--listen", f"{text!r} is not HOST:PORT", "give HOST:PORT, e.g. --listen 127.0.0.1:9478")


def registry(devices: DevicePoller | None) -> CollectorRegistry:
    """A registry with the HARMLESS collector (and the exporter's own process metrics)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(HarmlessCollector(devices))
    ProcessCollector(registry=reg)
    return reg


def serve(listen: tuple[str, int], device_interval: float, stop: threading.Event) -> None:
    """Serve /metrics on ``listen`` until ``stop`` is set; poll the devices every ``device_interval`` s (0: never).

    Raises:
        HarmlessError: the address cannot be bound.
    """
    devices = DevicePoller(device_interval) if device_interval > 0 else None
    try:
        server, thread = start_http_server(listen[1], addr=listen[0], registry=registry(devices))
    except OSError as e:
        raise HarmlessError("--listen", f"cannot listen on {listen[0]}:{listen[1]} ({e.strerror})",
                            "choose a free port with --listen HOST:PORT") from None
    log.info("serving metrics on http://%s:%d/metrics (device poll every %s)", listen[0], listen[1],
             f"{device_interval:g} s" if devices else "never")
    if devices is not None:
        devices.start()
    try:
        stop.wait()
    finally:
        if devices is not None:
            devices.stop()
        server.shutdown()
        thread.join(5)
