"""Offline planning: ``harmless plan -i inv.yaml --config sw1=running.cfg`` without contacting the device.

For change windows and reviews: the saved running config stands in for the device. The same planner and the same
preflight rules run on the same port model (:func:`harmless.switch_drivers.models.parse_model`), so the plan and
the refusals are those an online ``plan`` gives for a device with this running config. Every driver does it the one
way of its contract (:class:`~harmless.switch_drivers.base.SwitchDriver`): ``load_saved`` reads the saved config in
place of the device (facts, port model, what the render needs), ``render`` renders the candidate against it,
``saved_capabilities`` says what planning may assume, and ``saved_diff`` (where the driver diffs locally online
too: ProCurve's VLAN diff, Junos's set-path compare) or :func:`local_diff` gives the diff. Differences from online,
by necessity:

* the device's own compare (``diffs``) is computed locally; the full diff ``plan`` prints (``changes``: removals and
  additions) is computed the same way online and offline (:func:`harmless.plan.device_change`);
* what only the device knows is missing: VLANs that live only in the VLAN database (a VTP server keeps VLANs
  1-1005 out of the running config; its VLAN database is taken to hold the VLANs its config references, which are
  avoided and counted as spanning-tree instances), the platform
  (the spanning-tree instance limit then comes from ``stp_instance_limit`` only), the port HARMLESS's session
  arrives on, for IOS whether trunks need ``switchport trunk encapsulation dot1q`` (taken from the config:
  yes when any port has a ``switchport trunk encapsulation`` line), for Junos the VLAN syntax when the config uses
  neither ``interface-mode`` nor ``port-mode`` (then ELS), and the interfaces the config does not name.

Supported drivers: ``ios``, ``eos``, ``junos``, ``procurve``, and ``netmiko_cli`` with a dialect whose OS has a port
model (``cisco_ios``, ``hp_procurve``).
"""
from __future__ import annotations

from pathlib import Path

from harmless import state as st
from harmless.errors import DeviceError, InputError
from harmless.inventory import Inventory, Switch
from harmless.plan import Plan, device_change, plan_with_findings
from harmless.results import PlanResult
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.base import Capabilities, DeviceFacts, SwitchDriver

__all__ = ["local_diff", "offline_driver", "plan_offline", "parse_config_args"]


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


def offline_driver(sw: Switch, where: str) -> SwitchDriver:
    """The driver of an inventory switch, not connected (no password: a saved config stands in for the device).

    Raises:
        InputError: the driver cannot be set up from the inventory entry (``where`` names it).
    """
    try:
        return get_driver(sw.driver)(sw.host, sw.port, sw.username, "", optional_args=sw.optional_args,
                                     timeout=sw.command_timeout_s)
    except (DeviceError, ValueError) as e:
        raise InputError(f"{where}.optional_args", getattr(e, "problem", str(e)), "fix the inventory entry") from None


def _unsupported(sw: Switch, where: str) -> InputError:
    dialect = f" with device_type {sw.optional_args.get('device_type')}" if sw.driver == "netmiko_cli" else ""
    return InputError(f"{where}.driver", f"offline planning does not support driver {sw.driver}{dialect}",
                      f"plan {sw.name} online (without --config)")


def _diff(drv: SwitchDriver, running: str, candidate: str) -> str:
    try:
        return drv.saved_diff(running, candidate)
    except NotImplementedError:
        return local_diff(running, candidate)


def _read(drv: SwitchDriver, sw: Switch, where: str, path: Path) -> tuple[str, DeviceFacts]:
    """The saved config's text and the facts the driver reads from it. Raises InputError naming the file (or the
    driver, when it cannot plan from a saved config)."""
    name = sw.name
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise InputError(f"--config {name}={path}", "is not a text file", "save the running config as plain "
                         "text") from None
    except OSError as e:
        raise InputError(f"--config {name}={path}", f"cannot read the saved config ({e.strerror})",
                         "pass the file saved from show running-config") from None
    try:
        return text, drv.load_saved(text)
    except NotImplementedError:
        raise _unsupported(sw, where) from None
    except ValueError as e:
        raise InputError(str(path), f"cannot parse the saved config ({e})", "pass the running config as the "
                         "device prints it") from None


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
    drivers: dict[str, SwitchDriver] = {}
    facts: dict[str, DeviceFacts] = {}
    texts: dict[str, str] = {}
    for name, path in configs.items():
        if name not in names:
            raise InputError(f"--config {name}={path}", f"{src} has no switch {name}",
                             f"use one of: {', '.join(names)}")
        i, sw = names[name]
        drivers[name] = offline_driver(sw, f"{src}: switches[{i}]")
        texts[name], facts[name] = _read(drivers[name], sw, f"{src}: switches[{i}]", path)
    s = st.load()
    previous = Plan.from_dict(s.plan) if s and s.plan else None
    caps: dict[str, Capabilities] = {n: drivers[n].saved_capabilities() for n in facts}
    plan, findings = plan_with_findings(inv, facts, previous, src, caps)
    rendered = {}
    for sp in plan.switches:
        try:
            rendered[sp.name] = drivers[sp.name].render(sp.access_changes(), sp.trunk_changes())
        except ValueError as e:
            i = names[sp.name][0]
            raise InputError(f"{src}: switches[{i}]", str(e), "fix the inventory entry") from None
    diffs = {n: _diff(drivers[n], texts[n], c) for n, c in rendered.items()}
    changes = {}
    for n, c in rendered.items():       # the full diff, the same as online (removals and additions per block)
        i = names[n][0]
        change, more = device_change(names[n][1], texts[n], c, f"{src}: switches[{i}]")
        findings += more
        if change is not None:
            changes[n] = change
    return PlanResult(plan, diffs, facts, rendered, findings=findings, changes=changes)
