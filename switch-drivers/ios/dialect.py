"""IOS syntax for the netmiko line-wise workflow (:class:`~..netmiko_cli.dialects.Dialect` ``cisco_ios``; pure)."""
from __future__ import annotations

from harmless.switch_drivers.ios.hazards import replace_bridge
from harmless.switch_drivers.ios.parse import parse_port_states, parse_vlans
from harmless.switch_drivers.ios.render import render_config
from harmless.switch_drivers.netmiko_cli import linediff
from harmless.switch_drivers.netmiko_cli.dialects import Dialect


def _ios_strip(raw: str) -> str:
    """``show running-config`` without the ``Building configuration``/``Current configuration`` header."""
    lines = raw.splitlines()
    while lines and (not lines[0].strip() or lines[0].startswith(("Building configuration", "Current configuration"))):
        lines.pop(0)
    return "\n".join(ln.rstrip() for ln in lines).strip() + "\n"


def _ios_render(access, trunks, current):
    return render_config(access, trunks, current=current)


def _ios_transform(running: str, target: str) -> list[str]:
    """IOS: the replace bridge (nonegotiate/encapsulation ports change mode first), then the line diff."""
    bridge = [ln for ln in replace_bridge(running, target).splitlines() if ln.strip() not in ("!", "end")]
    return bridge + linediff.transform(running, target)


IOS = Dialect(
    device_type="cisco_ios", show_running="show running-config", strip_running=_ios_strip, render=_ios_render,
    diff=linediff.merge_diff, transform=_ios_transform, port_states=parse_port_states, vlans=parse_vlans,
    error_patterns=(r"% Invalid input", r"% Incomplete command", r"% Ambiguous command", r"Command rejected"),
    protected=("username ", "enable ", "aaa ", "line ", "crypto ", "ip ssh ", "snmp-server ", "hostname "),
    qinq=True, stag_tpids=(0x8100,),
    l2pt_source="the line-wise netmiko IOS driver does not configure l2protocol-tunnel: use driver ios (NAPALM)",
)
