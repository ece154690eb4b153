"""Running Faucet's integration tests in hardware-switch mode against each switch, and comparing the outcomes.

One side = one run of Faucet's own runner (``hw_main.py`` in the suite's virtualenv) in that side's test-host
namespace, serial (hardware mode), one try, with its JSON report (``-j``). The outcome of a test is Faucet's
(``OK``/``FAIL``/``ERROR``/``SKIPPED``), its reason the last exception line of its traceback. A failed test is run once
more on the side where it failed (both switches share a loaded 2-core machine: a timing failure must not decide the
comparison), except a known difference on HARMLESS; its row says so.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import yaml
from pydantic import BaseModel

from tests.interop.faucethw.install import Suite
from tests.interop.faucethw.rig import Rig

HERE = Path(__file__).resolve().parent
HW_MAIN = HERE / "hw_main.py"
LISTS = HERE / "lists.yaml"
#: what Faucet's runner is told: serial (forced in hardware mode anyway), one try, fixed port order and start port
RUNNER_ARGS = ["--nocheck", "--serial", "--retries", "1", "-o", "0,1,2,3", "--port", "1"]
#: seconds allowed per test method (Faucet's own limit per controller is 600 s)
PER_TEST_S = 420
#: serial-number offset of each side's host and switch names (hw_main.py): named namespaces of hosts are global
SID_OFFSET = {"plain": 0, "harmless": 1900}
#: a failure in a test's setUp that means the machine cannot run it at all (no 8021q: no VLAN sub-interface)
NO_8021Q = re.compile(r"Unknown device type|vlan.*(not supported|Operation not supported)|8021q", re.I)


class Outcome(BaseModel):
    """One test on one switch. ``status``: pass, fail, error (in setUp/tearDown or a crash), skipped, not run."""

    status: str
    reason: str = ""
    seconds: int | None = None
    tries: int = 1


class Row(BaseModel):
    """One test on both switches; ``why``: the reason of the failure that matters (HARMLESS's when only HARMLESS
    fails), or the known cause from ``lists.yaml``."""

    test: str
    plain: Outcome
    harmless: Outcome
    why: str = ""
    known: str = ""

    @property
    def regression(self) -> bool:
        """Passes on plain OVS, fails on HARMLESS."""
        return self.plain.status == "pass" and self.harmless.status != "pass"


def load_lists() -> dict:
    """``lists.yaml``: ``{"lists": {name: [test, ...]}, "known": {test: {"why": ..., "item": ...}}}``."""
    return yaml.safe_load(LISTS.read_text())


def short_paths(text: str) -> str:
    """Absolute paths of this machine (run folders, temporary files) shortened to ``.../<file name>``."""
    return re.sub(r"(?:/[\w.+-]+){2,}/([\w.+-]+)", r".../\1", text)


def reason_of(output: str) -> str:
    """The reason of a failure from Faucet's report (its traceback, newlines as tabs): the last exception line and
    what follows it (an ``assertEqual`` diff), e.g. ``AssertionError: 1 != 0 : dpid 1 port 7 status 1 != expected
    0``, at most 300 characters."""
    lines = [ln.strip() for ln in output.replace("\t", "\n").splitlines() if ln.strip()]
    exc = [i for i, ln in enumerate(lines) if re.match(r"^[\w.]*(Error|Exception|Exit|Interrupt)\b", ln)]
    text = " ".join(lines[exc[-1]:]) if exc else (lines[-1] if lines else "")
    if NO_8021Q.search(output):
        text = "needs a kernel VLAN device (no 8021q module here): " + text
    return short_paths(text)[:300]


def parse_report(path: Path, tests: list[str]) -> dict[str, Outcome]:
    """Faucet's JSON report (``-j``) as ``{Class.method: Outcome}``; requested classes or methods without an entry
    are ``not run``."""
    status_map = {"OK": "pass", "FAIL": "fail", "ERROR": "error", "SKIPPED": "skipped"}
    out: dict[str, Outcome] = {}
    data = json.loads(path.read_text()) if path.exists() else {"tests": {}}
    for tid, r in data["tests"].items():
        name = ".".join(tid.split(".")[-2:])
        st = status_map.get(r["status"], r["status"].lower())
        out[name] = Outcome(status=st, reason="" if st == "pass" else reason_of(r.get("output", "")),
                            seconds=r.get("test_duration_secs"))
    for t in tests:
        if not any(k == t or k.startswith(t + ".") for k in out):
            out[t] = Outcome(status="not run", reason="no result in Faucet's report (see the side's log)")
    return out


def side_argv(suite: Suite, rig: Rig, side: str, tests: list[str], tag: str) -> tuple[list[str], Path]:
    """The command running ``tests`` on ``side`` (in its test host) and the path of its JSON report."""
    d = rig.work / f"{side}-{tag}"
    (d / "logs").mkdir(parents=True, exist_ok=True)
    (d / "hw_switch_config.yaml").write_text(yaml.safe_dump(rig.hw_config(side)))
    report = d / "report.json"
    argv = ["ip", "netns", "exec", rig.test_ns(side), "env", *[f"{k}={v}" for k, v in rig.test_env(side).items()],
            f"PATH={suite.venv / 'bin'}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}",
            f"FAUCET_DIR={suite.src / 'faucet'}", f"FAUCETHW_SID_OFFSET={SID_OFFSET[side]}",
            str(suite.python), str(HW_MAIN), str(suite.src), str(d),
            str(d / "logs"), ",".join(tests), *RUNNER_ARGS, "-j", str(report)]
    return argv, report


#: the runs going on (:func:`stop_all` ends them on Ctrl-C)
RUNNING: set[subprocess.Popen] = set()


def stop_all() -> None:
    """SIGKILL the process group of every run going on (Faucet's runner, its Faucet, Gauge, tcpdump, mininet)."""
    for p in list(RUNNING):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass


def run_side(suite: Suite, rig: Rig, side: str, tests: list[str], tag: str = "1") -> dict[str, Outcome]:
    """Run ``tests`` on ``side``; output in ``<work>/<side>-<tag>/out.txt``. Returns the outcomes."""
    argv, report = side_argv(suite, rig, side, tests, tag)
    log = report.with_name("out.txt")
    with open(log, "w") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        RUNNING.add(p)
        try:
            p.wait(timeout=PER_TEST_S * len(tests) + 120)
        except subprocess.TimeoutExpired:
            f.write(f"\n[faucethw] timed out after {PER_TEST_S * len(tests) + 120} s: killed\n")
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            RUNNING.discard(p)
    return parse_report(report, tests)


def become_subreaper() -> None:
    """Make this process the reaper of its orphaned descendants (prctl PR_SET_CHILD_SUBREAPER, prctl(2)): mininet's
    host shells detach (``mnexec -d``), and a killed run must not leave them to init."""
    with_libc = ctypes.CDLL(None, use_errno=True)
    with_libc.prctl(36, 1, 0, 0, 0)


def descendants() -> set[int]:
    """Pids of the processes whose parent chain leads to this one."""
    me, parents = os.getpid(), {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out = set()
    for pid in parents:
        q, seen = parents.get(pid), 0
        while q and q != me and seen < 64:
            q, seen = parents.get(q), seen + 1
        if q == me:
            out.add(pid)
    return out


def kill_descendants(keep: set[int]) -> None:
    """SIGKILL every descendant of this process not in ``keep`` (what a run left: mininet's detached host shells,
    a Faucet of a killed test), then reap them. ``keep``: the descendants before the run (OVS daemons, the lab)."""
    for pid in descendants() - keep:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break


def in_threads(sides: dict, fn, parallel: bool) -> None:
    """``fn(side)`` for each side, in threads (all at once when ``parallel``), joined in short waits so that Ctrl-C
    reaches the main thread at once; a failure in a thread is raised here."""
    errors: list[BaseException] = []

    def guarded(side):
        try:
            fn(side)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(s,), daemon=True) for s in sides]
    for t in threads:
        t.start()
        while not parallel and t.is_alive():
            t.join(0.5)
    for t in threads:
        while t.is_alive():
            t.join(0.5)
    if errors:
        raise errors[0]


def run_sides(suite: Suite, rig: Rig, sides: tuple[str, ...], tests: list[str], parallel: bool,
              tag: str = "1", progress=print) -> dict[str, dict[str, Outcome]]:
    """Run ``tests`` on each side (at the same time when ``parallel``); ``{side: {test: Outcome}}``."""
    results: dict[str, dict[str, Outcome]] = {}

    def one(side: str) -> None:
        t0 = time.monotonic()
        results[side] = run_side(suite, rig, side, tests, tag)
        n = sum(o.status == "pass" for o in results[side].values())
        progress(f"{side}: {n}/{len(results[side])} passed in {time.monotonic() - t0:.0f} s")

    progress(f"running {len(tests)} test(s) on {' and '.join(sides)}{' at once' if parallel else ''}")
    keep = descendants()
    in_threads({s: tests for s in sides}, one, parallel)
    kill_descendants(keep)
    return results


def known_why(test: str, known: dict) -> str:
    """The known cause of ``test`` (``Class.method``) from lists.yaml's ``known`` (by method, else by class), or
    ``""``."""
    k = known.get(test) or known.get(test.split(".")[0]) or {}
    return k.get("why", "")


def relabel(rows: list[Row], known: dict) -> None:
    """Set each row's ``known`` from ``known`` (where HARMLESS failed), e.g. after lists.yaml changed."""
    for r in rows:
        r.known = known_why(r.test, known) if r.harmless.status != "pass" else ""


def rows_of(results: dict[str, dict[str, Outcome]], known: dict) -> list[Row]:
    """One row per test (the union of both sides' tests, in order of appearance)."""
    plain, harm = results.get("plain", {}), results.get("harmless", {})
    missing = Outcome(status="not run", reason="side not run")
    rows = []
    for t in dict.fromkeys([*plain, *harm]):
        p, h = plain.get(t, missing), harm.get(t, missing)
        rows.append(Row(test=t, plain=p, harmless=h, why=h.reason if h.status != "pass" else p.reason))
    relabel(rows, known)
    return rows


def retry_failures(suite: Suite, rig: Rig, rows: list[Row], parallel: bool, progress=print) -> None:
    """Run every failed test once more on the side where it failed (both sides share a loaded 2-core machine: one
    timing failure must not decide the comparison), except a known difference on HARMLESS (lists.yaml says why it
    fails there); a pass then replaces the outcome, ``tries`` is 2 either way."""
    ran = set(rig.ovs)         # the sides built: test hosts "mp" (plain) and "mh" (harmless)
    again = {"plain": [r.test for r in rows if r.plain.status != "pass" and "mp" in ran],
             "harmless": [r.test for r in rows if r.harmless.status != "pass" and not r.known and "mh" in ran]}
    again = {s: t for s, t in again.items() if t}
    if not again:
        return
    progress("once more where they failed: " + "; ".join(f"{s}: {', '.join(t)}" for s, t in again.items()))
    results: dict[str, dict[str, Outcome]] = {}

    def one(side: str) -> None:
        results[side] = run_side(suite, rig, side, again[side], "2")

    keep = descendants()
    in_threads(again, one, parallel)
    kill_descendants(keep)
    for r in rows:
        for side, tests in again.items():
            o = results[side].get(r.test)
            if r.test in tests and o is not None:
                o.tries = 2
                o.reason = o.reason if o.status != "pass" else getattr(r, side).reason
                setattr(r, side, o)
        r.why = r.harmless.reason if r.harmless.status != "pass" else r.plain.reason
        if r.harmless.status == "pass":
            r.known = ""
