"""Is the deployed server side whole? Read-only checks of br-otc against a plan (used by ``harmless restore`` and
the exporter).

Layer: above the plan and the translator (``harmless.otc``), below the commands. Nothing here changes anything.
"""
from __future__ import annotations

from harmless.errors import OvsError
from harmless.otc.flows import OTC_BRIDGE, OTC_COOKIE, switch_flows
from harmless.ovs import Ovs
from harmless.plan import Plan


def flow_key(line: str) -> tuple[frozenset[str], str]:
    """A flow line (as :meth:`Flow.to_ofctl` renders it or ``ovs-ofctl --no-stats dump-flows`` prints it) as
    ``(match and priority fields, actions)``, without cookie, table 0 and statistics, so both compare. Pure."""
    head, _, actions = line.strip().replace(" actions=", ",actions=").partition(",actions=")
    fields = {f.strip() for f in head.split(",") if f.strip()}
    fields = {f for f in fields if not f.startswith(("cookie=", "duration=", "n_packets=", "n_bytes=", "idle_age=",
                                                     "hard_age=")) and f != "table=0"}
    return frozenset(fields), actions.strip()


def expected_translator_flows(plan: Plan) -> dict[str, set[tuple[frozenset[str], str]]]:
    """Per switch, its br-otc translator flows as :func:`flow_key` keys. Pure."""
    return {sp.name: {flow_key(f.to_ofctl()) for f in switch_flows(sp, i)} for i, sp in plan.numbered()}


def translator_flows_present(ovs: Ovs, plan: Plan) -> dict[str, int]:
    """Per switch, how many of its expected translator flows br-otc holds now (0 each when br-otc cannot be read)."""
    try:
        text = ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", OTC_BRIDGE, f"cookie={OTC_COOKIE:#x}/-1",
                         timeout=10)
    except OvsError:
        text = ""
    got = {flow_key(line) for line in text.splitlines() if "actions=" in line}
    return {name: len(want & got) for name, want in expected_translator_flows(plan).items()}
