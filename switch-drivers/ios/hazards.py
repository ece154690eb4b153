"""IOS conversion hazards around ``configure replace`` (pure).

``configure replace`` turns the running config into the target by removing lines (their ``no`` form) and
adding lines. Removing a ``switchport mode`` line makes the port dynamic (DTP) for a moment, which IOS refuses
while ``switchport nonegotiate`` is set ("An interface must be configured to the "Access" or "Trunk" modes to be
configured to "NoNegotiate"", napalm-automation/napalm#1009, #1134), and removing ``switchport trunk
encapsulation dot1q`` from a port still in trunk mode is refused on ISL-capable platforms. With NAPALM's
``revert trigger error`` the whole replace is then abandoned. :func:`replace_bridge` computes the few
interface lines that, merged first, move each such port straight to its target mode, after which the replace
has no mode line left to change. Layer 2 protocol tunnelling is accepted only on access and dot1q-tunnel ports
(Catalyst configuration guides, "Configuring Layer 2 Protocol Tunneling"), so a port leaving those modes drops its
``l2protocol-tunnel`` lines that the target does not keep in the same merge, before its mode changes.
"""
from __future__ import annotations

from harmless.switch_drivers.ciscomodel import L2PT_LINE
from harmless.switch_drivers.ios.parse import interface_lines

_STATIC = ("access", "trunk", "dot1q-tunnel")


def _mode(lines: list[str]) -> str | None:
    for ln in lines:
        if ln.startswith("switchport mode "):
            return ln.split(None, 2)[2]
    return None


def replace_bridge(running: str, target: str) -> str:
    """Config lines to merge before ``configure replace`` of ``target`` onto ``running``; '' when none needed.

    For every interface whose ``switchport mode`` differs between the two texts: first ``no l2protocol-tunnel ...``
    for each tunnelling line the target does not have, then
      * target mode static (access/trunk/dot1q-tunnel): set it directly (``switchport mode X``), preceded by
        the target's ``switchport trunk encapsulation`` line when the target is a trunk that has one;
      * target mode dynamic (no mode line, or ``dynamic desirable``): ``no switchport nonegotiate`` if the port
        has it, then ``no switchport mode`` (or ``switchport mode dynamic desirable``).

    Args:
        running: the device's running config now.
        target: the config the replace will install (e.g. the backup taken before ``harmless up``).

    Returns:
        IOS config text (``interface`` blocks and ``end``), or '' when no interface changes mode.
    """
    now, want = interface_lines(running), interface_lines(target)
    out: list[str] = []
    for name, target_lines in want.items():
        cur = now.get(name)
        if cur is None or _mode(cur) == _mode(target_lines):
            continue
        mode = _mode(target_lines)
        lines = [f"no {ln}" for ln in cur if L2PT_LINE.match(ln) and ln not in target_lines]
        if mode in _STATIC:
            if mode == "trunk":
                lines += [ln for ln in target_lines if ln.startswith("switchport trunk encapsulation ")
                          and ln not in cur]
            lines.append(f"switchport mode {mode}")
        else:                                   # dynamic (DTP): nonegotiate must go first
            if "switchport nonegotiate" in cur:
                lines.append("no switchport nonegotiate")
            lines.append(f"switchport mode {mode}" if mode else "no switchport mode")
        out += [f"interface {name}"] + [f" {ln}" for ln in lines] + ["!"]
    return "\n".join(out + ["end"]) + "\n" if out else ""
