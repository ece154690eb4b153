"""Offline and online per-port models: one entry point per driver (see :mod:`.portmodel`).

Each driver sub-package that can describe its ports has a module ``<driver>/model.py`` with::

    def parse_model(config_text: str, show: dict[str, str] | None = None) -> SwitchModel

``config_text`` is the running config exactly as the device prints it (a saved file works the same: offline
planning and ``harmless ports --config``); ``show`` optionally maps ``show`` commands to their output (``show vtp
status``, ``show etherchannel summary``, ``show spanning-tree summary``, ...) for what the config text does not
hold. Pure: same input, same model.
"""
from __future__ import annotations

import importlib

from harmless.switch_drivers import DRIVERS
from harmless.switch_drivers.portmodel import SwitchModel

#: drivers whose port model is parsed by another driver's module (same config syntax)
SAME_SYNTAX = {"netmiko_cli": "ios"}


def parse_model(driver: str, config_text: str, show: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of a switch of ``driver`` from its running-config text (pure).

    Args:
        driver: inventory driver name (``ios``, ``eos``, ``junos``, ``procurve``, ``netmiko_cli``).
        config_text: running config text.
        show: optional ``{show command: output}``.

    Raises:
        KeyError: unknown driver.
        NotImplementedError: the driver has no port model yet.
        ValueError: the config cannot be parsed at all (message says where).
    """
    if driver not in DRIVERS:
        raise KeyError(driver)
    mod_name = SAME_SYNTAX.get(driver, driver)
    try:
        mod = importlib.import_module(f"harmless.switch_drivers.{mod_name}.model")
    except ModuleNotFoundError as e:
        raise NotImplementedError(f"driver {driver} has no port model") from e
    return mod.parse_model(config_text, show)
