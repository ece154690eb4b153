"""Per-``device_type`` syntax for :class:`..driver.NetmikoCliDriver` (pure parts only).

A dialect says how to read the running config, how to render the tagging config, how to diff and undo,
which device output means "refused", and which config sections the line-wise driver must never touch.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.netmiko_cli import linediff


@dataclass(frozen=True)
class Dialect:
    """Syntax of one netmiko ``device_type``.

    Attributes:
        device_type: netmiko device type (``cisco_ios``).
        show_running: command printing the running config.
        strip_running: raw output → config text (headers removed), stable across calls.
        render: ``(access, trunks, current_config) -> config text``.
        diff: ``(running, candidate) -> diff text`` ('' = no change).
        transform: ``(running, target) -> [config lines]`` turning one into the other line by line.
        port_states: config text → ``{port: PortVlanState}``.
        vlans: config text → ``{vid: name}``.
        error_patterns: regexes on ``send_config_set`` output that mean a line was refused.
        protected: line prefixes (lower case) this driver refuses to change line-wise (access/management).
        qinq: the render supports ``AccessPortChange.qinq``.
        stag_tpids: outer-tag TPIDs of QinQ ports.
    """

    device_type: str
    show_running: str
    strip_running: Callable[[str], str]
    render: Callable[[list[AccessPortChange], list[TrunkChange], str | None], str]
    diff: Callable[[str, str], str]
    transform: Callable[[str, str], list[str]]
    port_states: Callable[[str], dict[str, PortVlanState]]
    vlans: Callable[[str], dict[int, str]]
    error_patterns: tuple[str, ...]
    protected: tuple[str, ...]
    qinq: bool = False
    stag_tpids: tuple[int, ...] = ()


def _ios_strip(raw: str) -> str:
    """``show running-config`` without the ``Building configuration``/``Current configuration`` header."""
    lines = raw.splitlines()
    while lines and (not lines[0].strip() or lines[0].startswith(("Building configuration", "Current configuration"))):
        lines.pop(0)
    return "\n".join(ln.rstrip() for ln in lines).strip() + "\n"


def _ios_render(access, trunks, current):
    from harmless.switch_drivers.ios.render import render_config
    return render_config(access, trunks, current=current)


def _ios_port_states(text):
    from harmless.switch_drivers.ios.parse import parse_port_states
    return parse_port_states(text)


def _ios_vlans(text):
    from harmless.switch_drivers.ios.parse import parse_vlans
    return parse_vlans(text)


def _ios_transform(running: str, target: str) -> list[str]:
    """IOS: the replace bridge (nonegotiate/encapsulation ports change mode first), then the line diff."""
    from harmless.switch_drivers.ios.hazards import replace_bridge
    bridge = [ln for ln in replace_bridge(running, target).splitlines() if ln.strip() not in ("!", "end")]
    return bridge + linediff.transform(running, target)


IOS = Dialect(
    device_type="cisco_ios", show_running="show running-config", strip_running=_ios_strip, render=_ios_render,
    diff=linediff.merge_diff, transform=_ios_transform, port_states=_ios_port_states, vlans=_ios_vlans,
    error_patterns=(r"% Invalid input", r"% Incomplete command", r"% Ambiguous command", r"Command rejected"),
    protected=("username ", "enable ", "aaa ", "line ", "crypto ", "ip ssh ", "snmp-server ", "hostname "),
    qinq=True, stag_tpids=(0x8100,),
)


def get_dialect(device_type: str) -> Dialect:
    """The dialect for a netmiko ``device_type``.

    Raises:
        KeyError: no dialect (message lists the supported ones).
    """
    from harmless.switch_drivers.procurve.dialect import PROCURVE

    known = {d.device_type: d for d in (IOS, PROCURVE)}
    if device_type not in known:
        raise KeyError(f"no netmiko_cli dialect for device_type {device_type!r} (supported: {', '.join(known)})")
    return known[device_type]


def refused(dialect: Dialect, output: str) -> list[str]:
    """Lines of ``send_config_set`` output that match the dialect's error patterns, with the line before."""
    lines = output.splitlines()
    out = []
    for i, line in enumerate(lines):
        if any(re.search(p, line) for p in dialect.error_patterns):
            prev = next((lines[j].strip() for j in range(i - 1, -1, -1)
                         if lines[j].strip() and set(lines[j].strip()) != {"^"}), "")
            out.append(f"{prev}: {line.strip()}" if prev else line.strip())
    return out
