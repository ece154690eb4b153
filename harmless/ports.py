"""``harmless ports``: what every port of a legacy switch is now (the per-port model of issue #12), read online
from the device or offline from a saved running config. Nothing here changes a device.

- :func:`offline`: ``--driver D --config FILE`` → one :class:`~harmless.switch_drivers.portmodel.SwitchModel`.
- :func:`online`: ``-i inventory.yaml [--switch NAME]`` → ``{switch name: SwitchModel}`` (each switch's driver
  :meth:`~harmless.switch_drivers.base.SwitchDriver.port_model`).
- :func:`table_rows` / :func:`vid_ranges`: the human-readable rendering (the CLI prints it as a table).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from harmless import fleet
from harmless.deployment import connect
from harmless.errors import DeviceError, InputError
from harmless.inventory import load_inventory
from harmless.switch_drivers import DRIVERS
from harmless.switch_drivers.models import parse_model
from harmless.switch_drivers.portmodel import SwitchModel

Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    pass


def offline(driver: str, config_file: str) -> SwitchModel:
    """The port model of a saved running config (``harmless ports --driver D --config FILE``).

    Args:
        driver: inventory driver name (``ios``, ``eos``, ``junos``, ``procurve``, ``netmiko_cli``).
        config_file: path of the running config text as the device prints it.

    Raises:
        InputError: unknown driver, a driver without a port model, an unreadable file, or a file that is not a
            configuration of that OS (one line naming the file and the fix).
    """
    if driver not in DRIVERS:
        raise InputError("--driver", f"unknown driver {driver!r}", f"use one of {', '.join(sorted(DRIVERS))}")
    try:
        text = Path(config_file).read_text()
    except UnicodeDecodeError:
        raise InputError(config_file, "is not a text file", "save the running config as plain text") from None
    except OSError as e:
        raise InputError(config_file, f"cannot read it ({e.strerror})",
                         "give the path of a saved running config") from None
    return _parse(driver, text, config_file)


def _parse(driver: str, text: str, where: str) -> SwitchModel:
    try:
        return parse_model(driver, text)
    except NotImplementedError:
        raise InputError("--driver", f"driver {driver} has no port model in this version",
                         "use junos or procurve, or update harmless") from None
    except ValueError as e:
        raise InputError(where, f"not a {driver} configuration ({e})",
                         f"give the running config of a {driver} switch, or the right --driver") from None


def online(inventory_path: str, switch: str | None = None, progress: Progress = _quiet) -> dict[str, SwitchModel]:
    """The port model of each switch of an inventory, read from the device (read-only; sessions are closed).

    Args:
        inventory_path: inventory YAML file.
        switch: only this switch (its ``name``); None: every switch.
        progress: called with one line per step.

    Returns:
        ``{switch name: SwitchModel}`` in inventory order (switches are read in parallel, like ``plan``).

    Raises:
        InputError: bad inventory, an unknown ``--switch``, a secret that cannot be read.
        DeviceError: a switch cannot be reached or read, or its running config does not parse.
    """
    inv = load_inventory(inventory_path)
    names = [sw.name for sw in inv.switches]
    if switch is not None and switch not in names:
        raise InputError(f"{inventory_path}: switches", f"no switch named {switch!r}",
                         f"use one of {', '.join(names)}")
    chosen = [sw for sw in inv.switches if switch is None or sw.name == switch]
    where = {sw.name: f"{inventory_path}: switches[{i}]" for i, sw in enumerate(inv.switches)}
    # every secret reference is resolved before any device is contacted (like plan)
    passwords = {sw.name: sw.password(where[sw.name]) for sw in chosen}

    def read(sw) -> SwitchModel:
        progress(f"reading {sw.name} ({sw.driver}) at {sw.host}:{sw.port}")
        drv = connect(sw, where[sw.name], passwords[sw.name])
        try:
            return drv.port_model()
        except NotImplementedError:
            raise InputError(f"{where[sw.name]}.driver", f"driver {sw.driver} has no port model in this version",
                             "update harmless") from None
        except ValueError as e:
            raise DeviceError(where[sw.name], f"the running config of {sw.name} does not parse ({e})",
                              "report it with the running config attached (remove secrets first)") from None
        finally:
            drv.close()

    outcomes = fleet.run_per_switch(chosen, read, name="harmless-ports")
    for o in outcomes.values():                    # the first failure, in inventory order
        if not o.ok:
            raise o.error
    return {n: o.value for n, o in outcomes.items()}


def vid_ranges(vids) -> str:
    """``[1, 2, 3, 7, 10, 11]`` → ``"1-3,7,10-11"``; ``"all"`` → ``"all"``; None → ``""``."""
    if vids is None:
        return ""
    if isinstance(vids, str):
        return vids
    runs: list[list[int]] = []
    for v in sorted(vids):
        if runs and runs[-1][-1] + 1 == v:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs) or "(none)"


#: the columns of :func:`table_rows`, in order
TABLE_COLUMNS = ("interface", "mode", "access", "native", "allowed", "LAG", "voice", "802.1X", "port-sec",
                 "shutdown", "unparsed", "description")


def table_rows(name: str, model: SwitchModel) -> tuple[str, tuple[str, ...], list[list[str]]]:
    """One switch's ports as a table (pure; the CLI prints it with :func:`harmless.clikit.print_table`).

    Returns:
        ``(title, TABLE_COLUMNS, rows)``: the title names the switch, VTP mode, spanning-tree mode and VLAN list;
        one row of strings per port (interface, mode, VIDs, LAG, voice, 802.1X, port security, shutdown, the
        number of unparsed lines, description; '' where a value is absent).
    """
    title = (f"{name}: VTP {model.vtp_mode or 'n/a'}, spanning tree {model.stp_mode or 'n/a'}, "
             f"VLANs {vid_ranges(model.vlans) if model.vlans else '(none)'}")

    def yes(b: bool) -> str:
        return "yes" if b else ""

    rows = []
    for p in model.ports:
        mode = p.mode + (" (mgmt)" if p.management else "")
        lag = "LAG" if p.is_lag else (p.lag or "")
        if p.mlag_peer_link:
            lag += " (peer link)"
        rows.append([p.interface, mode, "" if p.access_vid is None else str(p.access_vid),
                     "" if p.native_vid is None else str(p.native_vid), vid_ranges(p.allowed_vids), lag,
                     "" if p.voice_vid is None else str(p.voice_vid), yes(p.dot1x), yes(p.port_security),
                     yes(p.shutdown), str(len(p.unparsed)) if p.unparsed else "", p.description or ""])
    return title, TABLE_COLUMNS, rows


__all__ = ["TABLE_COLUMNS", "offline", "online", "table_rows", "vid_ranges"]
