"""Per-``device_type`` syntax for :class:`..driver.NetmikoCliDriver` (pure parts only): the :class:`Dialect` record
and :func:`refused`. The dialects themselves live with their OS (``..ios.dialect.IOS``, ``..procurve.dialect.PROCURVE``)
and are looked up by ``device_type`` in :mod:`.registry` (this module imports none of them, so they can import it).

A dialect says how to read the running config, how to render the tagging config, how to diff and undo,
which device output means "refused", and which config sections the line-wise driver must never touch.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange


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
        l2pt_source: why this dialect tunnels no link-local protocol (``plan``'s warning for a port with ``l2pt``).
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
    l2pt_source: str = ""


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
