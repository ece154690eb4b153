"""Offline planning: ``harmless plan -i inv.yaml --config sw1=running.cfg`` without contacting the device.

For change windows and reviews: the saved running config stands in for the device. The same planner and the same
preflight rules run on the same port model (:func:`harmless.switch_drivers.models.parse_model`), so the plan and
the refusals are those an online ``plan`` gives for a device with this running config. Differences, by necessity:

* the device's own compare is replaced by :func:`local_diff` (the candidate's lines the saved config does not have,
  per block, like IOS ``show archive config incremental-diffs``); the full diff ``plan`` prints (``changes``:
  removals and additions) is computed the same way online and offline (:func:`harmless.plan.device_change`);
* what only the device knows is missing: VLANs that live only in the VLAN database (a VTP server keeps VLANs
  1-1005 out of the running config; its VLAN database is taken to hold the VLANs its config references, which are
  avoided and counted as spanning-tree instances), the platform
  (the spanning-tree instance limit then comes from ``stp_instance_limit`` only), the port HARMLESS's session
  arrives on, and for IOS whether trunks need ``switchport trunk encapsulation dot1q`` (taken from the config:
  yes when any port has a ``switchport trunk encapsulation`` line).

Supported drivers: ``ios``, ``netmiko_cli`` with the IOS dialect, ``eos``.
"""
from __future__ import annotations

from pathlib import Path

from harmless import state as st
from harmless.errors import InputError
from harmless.inventory import Inventory, Switch
from harmless.plan import Plan, device_change, plan_with_findings
from harmless.results import PlanResult
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.eos import parse as eos_parse
from harmless.switch_drivers.eos import render as eos_render
from harmless.switch_drivers.ios import parse as ios_parse
from harmless.switch_drivers.ios import render as ios_render
from harmless.switch_drivers.base import Capabilities, DeviceFacts
from harmless.switch_drivers.models import parse_model

__all__ = ["OFFLINE_DRIVERS", "local_diff", "offline_facts", "plan_offline", "parse_config_args"]

#: drivers whose saved config can be planned against, and the capabilities planning assumes for them (the same
#: as the online driver declares: IOS dot1q-tunnel with TPID 0x8100, EOS 0x8100/0x88a8)
OFFLINE_DRIVERS = {
    "ios": Capabilities(commit_confirm=False, replace=True, qinq=True, stag_tpids=(0x8100,), link_state=True),
    "netmiko_cli": Capabilities(commit_confirm=False, replace=False, qinq=True, stag_tpids=(0x8100,)),
    "eos": Capabilities(commit_confirm=True, replace=True, qinq=True, lag=True, stag_tpids=(0x8100, 0x88A8),
                        link_state=True),
}
#: VLANs ``show vlan`` lists on every IOS switch (what NAPALM get_vlans returns online) besides configured ones
_IOS_DEFAULT_VLANS = {1: "default", 1002: "fddi-default", 1003: "token-ring-default", 1004: "fddinet-default",
                      1005: "trnet-default"}


def parse_config_args(values: tuple[str, ...] | list[str]) -> dict[str, Path]:
    """``("sw1=run.cfg", ...)`` -> ``{"sw1": Path("run.cfg")}``. Raises InputError (``--config``) on bad input."""
    out: dict[str, Path] = {}
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name or not path:
            raise InputError("--config", f"{v!r} is not SWITCH=FILE", "write e.g. --config sw1=running.cfg")
        if name in out:
            raise InputError("--config", f"switch {name} is given twice", "give one saved config per switch")
        out[name] = Path(path)
    return out


def _vlans(driver: str, text: str) -> dict[int, str]:
    if driver in ("ios", "netmiko_cli"):
        return {**_IOS_DEFAULT_VLANS, **ios_parse.parse_vlans(text)}
    return eos_parse.parse_vlans(text)


def offline_facts(sw: Switch, text: str) -> DeviceFacts:
    """:class:`DeviceFacts` of a switch from its saved running config (pure).

    ``interfaces`` are the config's ``interface`` blocks, ``vlans`` its ``vlan`` blocks (plus IOS's built-in VLANs;
    on a VTP server/client also every VLAN the config references, as its VLAN database is not in the config),
    ``ports``/``port_model`` its port model, ``hostname`` its ``hostname`` line; model and session port unknown.

    Raises:
        ValueError: the config cannot be parsed.
    """
    model = parse_model(sw.driver, text)
    parse_port_states = ios_parse.parse_port_states if sw.driver in ("ios", "netmiko_cli") else \
        eos_parse.parse_port_states
    host = next((ln.split()[1] for ln in text.splitlines() if ln.startswith("hostname ") and len(ln.split()) > 1), "")
    vlans = _vlans(sw.driver, text)
    if model.vtp_mode in ("server", "client"):      # the VLAN database is not in the config: take what it references
        vlans = {**{v: "" for v in model.vlans}, **vlans}
    return DeviceFacts(hostname=host, model="", os_version="", interfaces=tuple(p.interface for p in model.ports),
                       vlans=vlans, ports=parse_port_states(text), port_model=model)


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        s = " ".join(raw.split())
        if not s or s.startswith("!") or s == "end":
            continue
        if raw[0] in " \t" and out:
            out[-1][1].append(s)
        else:
            out.append((s, []))
    return out


def local_diff(running: str, candidate: str) -> str:
    """The candidate's lines the running config lacks, per top-level block (pure; what a merge would add).

    Returns:
        ``+``-prefixed lines (a block's header without ``+`` when only children are new), '' when nothing is new.
    """
    have: dict[str, set[str]] = {}
    for parent, children in _blocks(running):
        have.setdefault(parent, set()).update(children)
    out: list[str] = []
    for parent, children in _blocks(candidate):
        if parent not in have:
            out += [f"+{parent}"] + [f" +{c}" for c in children]
            continue
        new = [c for c in children if c not in have[parent]]
        if new:
            out += [parent] + [f" +{c}" for c in new]
    return "\n".join(out) + ("\n" if out else "")


def _render(sw: Switch, text: str, sp) -> str:
    cls = get_driver(sw.driver)
    if sw.driver == "eos":
        return eos_render.render_config(sp.access_changes(), sp.trunk_changes())
    if sw.driver == "ios":
        return ios_render.render_config(sp.access_changes(), sp.trunk_changes(), current=text,
                             trunk_encapsulation="switchport trunk encapsulation" in text)
    drv = cls(sw.host, sw.port, sw.username, "", optional_args=sw.optional_args)   # netmiko_cli: dialect render
    drv._current = text
    return drv.render(sp.access_changes(), sp.trunk_changes())


def plan_offline(inv: Inventory, src: str, configs: dict[str, Path]):
    """Plan the switches named in ``configs`` from their saved running configs; no device is contacted.

    Args:
        inv: the validated inventory.
        src: the inventory file name (for messages).
        configs: ``{switch name: saved running-config file}``; switches not named are left out of the plan (the
            others keep their br-otc numbers).

    Returns:
        :class:`harmless.results.PlanResult` with the plan, a local diff per switch, the facts and the
        rendered candidates.

    Raises:
        InputError: unknown switch, unreadable file, unsupported driver, or any planning/preflight refusal.
    """
    names = {sw.name: (i, sw) for i, sw in enumerate(inv.switches)}
    facts: dict[str, DeviceFacts] = {}
    texts: dict[str, str] = {}
    for name, path in configs.items():
        if name not in names:
            raise InputError(f"--config {name}={path}", f"{src} has no switch {name}",
                             f"use one of: {', '.join(names)}")
        i, sw = names[name]
        if sw.driver not in OFFLINE_DRIVERS or (
                sw.driver == "netmiko_cli" and sw.optional_args.get("device_type", "cisco_ios") != "cisco_ios"):
            raise InputError(f"{src}: switches[{i}].driver", f"offline planning does not support driver {sw.driver} "
                             "yet", f"plan {name} online (without --config), or use one of: "
                             f"{', '.join(OFFLINE_DRIVERS)}")
        try:
            texts[name] = path.read_text()
        except OSError as e:
            raise InputError(f"--config {name}={path}", f"cannot read the saved config ({e.strerror})",
                             "pass the file saved from show running-config") from None
        try:
            facts[name] = offline_facts(sw, texts[name])
        except ValueError as e:
            raise InputError(str(path), f"cannot parse the saved config ({e})", "pass the running config as the "
                             "device prints it") from None
    s = st.load()
    previous = Plan.from_dict(s.plan) if s and s.plan else None
    caps = {n: OFFLINE_DRIVERS[names[n][1].driver] for n in facts}
    plan, findings = plan_with_findings(inv, facts, previous, src, caps)
    rendered = {}
    for sp in plan.switches:
        try:
            rendered[sp.name] = _render(names[sp.name][1], texts[sp.name], sp)
        except ValueError as e:
            i = names[sp.name][0]
            raise InputError(f"{src}: switches[{i}]", str(e), "fix the inventory entry") from None
    diffs = {n: local_diff(texts[n], c) for n, c in rendered.items()}
    changes = {}
    for n, c in rendered.items():       # the full diff, the same as online (removals and additions per block)
        i = names[n][0]
        change, more = device_change(names[n][1], texts[n], c, f"{src}: switches[{i}]")
        findings += more
        if change is not None:
            changes[n] = change
    return PlanResult(plan, diffs, facts, rendered, findings=findings, changes=changes)
