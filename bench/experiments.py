"""Where do HARMLESS's extra cycles go? Translator encodings and OVS settings, each measured against plain
in the same OVS-DPDK run (``harmless bench --suite paper`` runs them; results go to FINDINGS/summary).

Every variant changes only br-otc's flows or one OVS setting, re-measures HARMLESS and plain in alternation and
records the datapath actions OVS compiled (``dpctl/dump-flows``), so a figure can be tied to what the PMD executes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from harmless import openflow as of
from harmless.bench.quick import compare
from harmless.bench.sut import PORT_A, PORT_B, VID_A, VID_B
from harmless.otc.flows import OTC_COOKIE, patch_ofport, trunk_ofport

TA, TB = trunk_ofport(1, 0), trunk_ofport(1, 1)
PA, PB = patch_ofport(1, PORT_A), patch_ofport(1, PORT_B)


def _flows(lines: list) -> list[str]:
    """ovs-ofctl lines with the translator's cookie in table 0, plus its priority-0 drop; ``lines`` are
    :class:`harmless.openflow.Flow` objects or, for OpenFlow 1.0 actions the builder does not model, text."""
    return [f.to_ofctl() if isinstance(f, of.Flow) else f"cookie={OTC_COOKIE:#x},table=0,{f}" for f in lines] + \
        [of.Flow(0, cookie=OTC_COOKIE).to_ofctl()]


def translator_mod_vlan_vid() -> list[str]:
    """Egress as ``mod_vlan_vid`` (OF 1.0 style) instead of push_vlan + set_field; ingress ``strip_vlan``."""
    return _flows([f"priority=100,in_port={TA},dl_vlan={VID_A},actions=strip_vlan,output:{PA}",
                   f"priority=100,in_port={TB},dl_vlan={VID_B},actions=strip_vlan,output:{PB}",
                   f"priority=100,in_port={PA},actions=mod_vlan_vid:{VID_A},output:{TA}",
                   f"priority=100,in_port={PB},actions=mod_vlan_vid:{VID_B},output:{TB}"])


def translator_same_vid() -> list[str]:
    """Control, not a product encoding: both ports use VID 107 (each on its own trunk), so a frame leaves with
    the VID it came with and OVS compiles NO VLAN action: isolates the cost of the pop/push from the cost of the
    extra bridges and patch ports. Still transparent: br-of sees untagged frames on ports 7 and 10."""
    return _flows([of.Flow(100, of.match(in_port=t, vlan_vid=of.vid_present(VID_A)), (of.pop_vlan(), of.output_port(p)),
                           OTC_COOKIE) for t, p in ((TA, PA), (TB, PB))] +
                  [of.Flow(100, of.match(in_port=p), (*of.push_vlan_act(VID_A), of.output_port(t)), OTC_COOKIE)
                   for p, t in ((PA, TA), (PB, TB))])


@dataclass
class Variant:
    """One experiment: a translator flow set and/or OVS settings (``other_config`` or appctl commands)."""

    name: str
    what: str
    translator: Callable[[], list[str]] | None = None
    other_config: dict[str, str] = field(default_factory=dict)
    appctl: list[list[str]] = field(default_factory=list)
    undo_appctl: list[list[str]] = field(default_factory=list)


VARIANTS = [
    Variant("default", "product translator: pop_vlan / push_vlan:0x8100,set_field:vid"),
    Variant("mod_vlan_vid", "translator egress mod_vlan_vid, ingress strip_vlan", translator_mod_vlan_vid),
    Variant("same-vid (control)", "both ports VID 107 on separate trunks: no VLAN rewrite in the datapath",
            translator_same_vid),
    Variant("smc", "signature match cache on (other_config:smc-enable=true)",
            other_config={"smc-enable": "true"}),
    Variant("tx-flush-50us", "output batching across PMD iterations (other_config:tx-flush-interval=50 µs)",
            other_config={"tx-flush-interval": "50"}),
    Variant("emc-always-insert", "EMC insertion on every miss (other_config:emc-insert-inv-prob=1)",
            other_config={"emc-insert-inv-prob": "1"}),
    Variant("vlan-limit-2", "parse two VLAN headers into the flow key (other_config:vlan-limit=2)",
            other_config={"vlan-limit": "2"}),
    Variant("mfex-study", "miniflow extraction 'study' (picks the fastest available MFEX)",
            appctl=[["dpif-netdev/miniflow-parser-set", "study"]],
            undo_appctl=[["dpif-netdev/miniflow-parser-set", "scalar"]]),
]

_ACTIONS = re.compile(r"in_port\(([^)]+)\).*?actions:(\S+)")


def datapath_actions(dump: str) -> dict[str, list[str]]:
    """``dpctl/dump-flows`` -> ``{in_port: [actions, ...]}`` (pure; duplicates removed, order kept)."""
    out: dict[str, list[str]] = {}
    for line in dump.splitlines():
        m = _ACTIONS.search(line)
        if m:
            acts = out.setdefault(m.group(1), [])
            if m.group(2) not in acts:
                acts.append(m.group(2))
    return out


def simd_capabilities(appctl: Callable[..., str]) -> dict[str, str]:
    """What the running OVS offers for run-time SIMD selection (the Debian 3.1 build: scalar only)."""
    out = {}
    for key, cmd in (("dpif", "dpif-netdev/dpif-impl-get"), ("mfex", "dpif-netdev/miniflow-parser-get"),
                     ("actions", "odp-execute/action-impl-show"), ("dpcls", "dpif-netdev/subtable-lookup-info-get")):
        try:
            out[key] = appctl(*cmd.split()).strip()
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            out[key] = f"error: {e}"
    return out


def run_variants(session, duration: float, rounds: int, progress: Callable[[str], None],
                 variants: list[Variant] | None = None) -> list[dict]:
    """Measure every variant (HARMLESS vs plain, alternating) in the open session; restores defaults after each."""
    results = []
    for v in variants or VARIANTS:
        progress(f"experiment: {v.name} — {v.what}")
        ovs = session.systems.ovs
        try:
            if v.translator:
                session.systems.set_translator_flows(v.translator())
            if v.other_config:
                ovs.vsctl("set", "Open_vSwitch", ".", *[f"other_config:{k}={x}" for k, x in v.other_config.items()])
            for c in v.appctl:
                ovs.appctl(*c)
            r = compare(session, duration, rounds, progress)
            # the last window was HARMLESS when rounds is even (ABBA): its datapath flows are still there
            r["datapath_actions"] = datapath_actions(ovs.appctl("dpctl/dump-flows", "--names"))
            r.update(variant=v.name, what=v.what)
            results.append(r)
            progress(f"  => ratio {r['ratio']:.2f} (Mpps), {r['cycles_ratio']:.2f} (cycles); "
                     f"HARMLESS {r['harmless_cycles_per_packet']:.0f} vs plain {r['plain_cycles_per_packet']:.0f} "
                     "cycles/pkt")
        finally:
            if v.translator:
                session.systems.restore_translator()
            if v.other_config:
                ovs.vsctl("remove", "Open_vSwitch", ".", "other_config", *v.other_config)
            for c in v.undo_appctl:
                try:
                    ovs.appctl(*c)
                except Exception:  # noqa: BLE001
                    pass
    return results
