"""HPE ProCurve / Aruba-OS switch driver: netmiko ``hp_procurve`` + the line-wise workflow of netmiko_cli.

Capabilities (honest): no commit-confirm (the OS has no revert timer for CLI changes), no atomic replace
(restore is a verified line-wise transform of the VLAN table), no QinQ (``qinq`` mode needs a reboot and is
not driven), no LAG, no link state.
"""
from __future__ import annotations

from harmless.switch_drivers.netmiko_cli.driver import NetmikoCliDriver


class ProcurveDriver(NetmikoCliDriver):
    """One ProCurve / Aruba-OS switch (netmiko ``hp_procurve``); see :class:`NetmikoCliDriver` for arguments.

    Interface names are ProCurve port numbers (``7``, ``25``, ``A1``).
    """

    name = "procurve"
    default_device_type = "hp_procurve"


__all__ = ["ProcurveDriver"]
