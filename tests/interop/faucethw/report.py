"""The result of one comparison run: typed (JSON), a terminal table, a Markdown table (committed results)."""
from __future__ import annotations

import os
import platform
import re
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from tests.interop.faucethw.install import FAUCET_VERSION, REPO, Suite
from tests.interop.faucethw.run import Outcome, Row, short_paths


class Report(BaseModel):
    """One run: where and when, with what, which tests, how long each phase took (s), the rows; ``lab``: the lab
    switch's platform and tunnelled protocols (absent in reports before layer-2 protocol tunnelling)."""

    date: str
    machine: dict[str, str]
    versions: dict[str, str]
    test_list: str
    sides: list[str]
    parallel: bool
    seconds: dict[str, float]
    rows: list[Row]
    lab: dict[str, str] = {}

    @property
    def regressions(self) -> list[Row]:
        """Tests that pass on plain OVS and fail on HARMLESS."""
        return [r for r in self.rows if r.regression]

    def summary(self) -> dict:
        """Counts: tests, passed per side, regressions (of them known), failed on both."""
        return {"tests": len(self.rows),
                "plain_passed": sum(r.plain.status == "pass" for r in self.rows),
                "harmless_passed": sum(r.harmless.status == "pass" for r in self.rows),
                "plain_pass_harmless_fail": len(self.regressions),
                "of_them_known": sum(bool(r.known) for r in self.regressions),  # known: only on a regression
                "failed_on_both": sum(r.plain.status != "pass" and r.harmless.status != "pass" for r in self.rows)}


def _version(argv: list[str], pattern: str) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        out = p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    m = re.search(pattern, out)
    return m.group(1) if m else "?"


def environment(suite: Suite) -> tuple[dict[str, str], dict[str, str]]:
    """``(machine, versions)``: kernel, cores, load; Faucet, os-ken, OVS, mininet, Python, HARMLESS's commit."""
    machine = {"kernel": platform.release(), "cores": str(os.cpu_count()),
               "load_1min": f"{os.getloadavg()[0]:.1f}", "python": platform.python_version()}
    commit = _version(["git", "-C", str(REPO), "log", "-1", "--format=%h %cs %s"], r"(.+)")
    osken = _version([str(suite.python), "-m", "pip", "show", "os-ken"], r"Version: (\S+)")
    versions = {"faucet": FAUCET_VERSION, "os-ken": osken,
                "openvswitch": _version(["ovs-vswitchd", "--version"], r"\(Open vSwitch\) (\S+)"),
                "mininet": _version(["mn", "--version"], r"(\d+\.\d+\.\d+)"), "harmless": commit}
    return machine, versions


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def cell(o: Outcome) -> str:
    """One outcome as table text: ``pass``, ``FAIL``, ``ERROR`` ..., ``(2nd try)`` when it took two."""
    s = o.status if o.status in ("pass", "skipped", "not run") else o.status.upper()
    return s + (" (2nd try)" if o.tries > 1 else "")


def why(r: Row) -> str:
    """The reason column: the known cause first (lists.yaml), then the failure's last exception line."""
    if r.plain.status == "pass" and r.harmless.status == "pass":
        return ""
    return f"{r.known} — {r.why}" if r.known and r.regression else r.why


def print_table(rep: Report, console: Console) -> None:
    t = Table(title=f"Faucet {FAUCET_VERSION} hardware-switch tests: plain OVS vs HARMLESS ({rep.test_list})")
    for c in ("test", "plain OVS", "HARMLESS", "why"):
        t.add_column(c, overflow="fold")
    for r in rep.rows:
        style = "red" if r.regression and not r.known else ("yellow" if r.regression else None)
        t.add_row(r.test, cell(r.plain), cell(r.harmless), why(r), style=style)
    console.print(t)
    s = rep.summary()
    console.print(f"{s['tests']} tests: plain OVS passed {s['plain_passed']}, HARMLESS passed {s['harmless_passed']}; "
                  f"pass on plain and fail on HARMLESS: {s['plain_pass_harmless_fail']} "
                  f"({s['of_them_known']} known); fail on both: {s['failed_on_both']}; "
                  + ", ".join(f"{k} {v:.0f} s" for k, v in rep.seconds.items()))


def markdown(rep: Report) -> str:
    """The committed form (``tests/interop/results/*.md``)."""
    s = rep.summary()
    lines = [f"# Faucet {FAUCET_VERSION} hardware-switch tests: plain OVS vs HARMLESS (`{rep.test_list}`)", "",
             f"Run {rep.date}; machine: " + ", ".join(f"{k} {v}" for k, v in rep.machine.items()) + "; versions: "
             + ", ".join(f"{k} {v}" for k, v in rep.versions.items()) + ".", "",
             (f"Lab: Catalyst {rep.lab.get('platform', '2960')}, l2pt {rep.lab.get('l2pt', 'none')}. " if rep.lab else "")
             + f"Sides {' and '.join(rep.sides)}{' at the same time' if rep.parallel else ', one after the other'}; "
             "time: " + ", ".join(f"{k} {v:.0f} s" for k, v in rep.seconds.items()) + ".", "",
             f"{s['tests']} tests: plain OVS passed {s['plain_passed']}, HARMLESS passed {s['harmless_passed']}; "
             f"pass on plain OVS and fail on HARMLESS: {s['plain_pass_harmless_fail']} ({s['of_them_known']} "
             f"known); fail on both: {s['failed_on_both']}.", "",
             "| test | plain OVS | HARMLESS | why |", "|---|---|---|---|"]
    for r in rep.rows:
        w = why(r).replace("|", "\\|")
        lines.append(f"| `{r.test}` | {cell(r.plain)} | {cell(r.harmless)} | {w} |")
    return "\n".join(lines) + "\n"


def write(rep: Report, out_dir: Path, stem: str) -> list[Path]:
    """``<out_dir>/<stem>.json`` and ``.md`` (paths of this machine in the reasons shortened)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for r in rep.rows:
        r.why = short_paths(r.why)
        r.plain.reason, r.harmless.reason = short_paths(r.plain.reason), short_paths(r.harmless.reason)
    j, m = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    j.write_text(rep.model_dump_json(indent=2) + "\n")
    m.write_text(markdown(rep))
    return [j, m]
