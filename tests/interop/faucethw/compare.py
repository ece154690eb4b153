"""One comparison run: install (if needed), build, run on both switches, retry differences, tear down."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tests.interop.faucethw import install as inst, report as repmod, rig as rigmod, run as runmod
from tests.interop.faucethw.rig import SIDES


def compare(name: str, tests: list[str], sides: tuple[str, ...] = SIDES, parallel: bool = True, retry: bool = True,
            work: Path | None = None, progress=print, platform: str = rigmod.PLATFORM,
            l2pt: tuple[str, ...] = rigmod.L2PT) -> repmod.Report:
    """Install if needed, build both switches, run ``tests`` on each, run failures once more, tear down.

    Args:
        name: the list's name (for the report); tests: ``Class`` or ``Class.method`` entries; sides: which
            switches; parallel: both at the same time; retry: failures once more; work: run folder (default: a
            new temporary one; failed tests' logs stay there); platform, l2pt: the lab's Catalyst and the
            link-local protocols it tunnels (inventory ``l2pt``).

    Returns:
        The :class:`~tests.interop.faucethw.report.Report`.

    Raises:
        HarmlessError: installing, building the lab or ``harmless up`` failed (everything built is torn down).
    """
    suite = inst.install(progress=progress)
    work = (work or Path(tempfile.mkdtemp(prefix="faucethw-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    progress(f"run folder {work}")
    runmod.become_subreaper()
    secs, t0 = {}, time.monotonic()
    machine, versions = repmod.environment(suite)
    with rigmod.rig_up(work, sides, progress, platform, l2pt) as rig:
        keep = runmod.descendants()          # the rig's daemons (OVS, the emulated switch, harmless watch)
        try:
            secs["build"] = time.monotonic() - t0
            t1 = time.monotonic()
            results = runmod.run_sides(suite, rig, sides, tests, parallel, progress=progress)
            secs["tests"] = time.monotonic() - t1
            rows = runmod.rows_of(results, runmod.load_lists().get("known") or {})
            if retry:
                t1 = time.monotonic()
                runmod.retry_failures(suite, rig, rows, parallel, progress)
                secs["retries"] = time.monotonic() - t1
        finally:            # also on Ctrl-C/SIGTERM: the runs first, then what they left, then the rig
            runmod.stop_all()
            runmod.kill_descendants(keep)
            t1 = time.monotonic()
    secs["teardown"] = time.monotonic() - t1
    secs["total"] = time.monotonic() - t0
    return repmod.Report(date=repmod.now(), machine=machine, versions=versions, test_list=name, sides=list(sides),
                         parallel=parallel, seconds=secs, rows=rows,
                         lab={"platform": platform, "l2pt": ",".join(l2pt) or "none"})
