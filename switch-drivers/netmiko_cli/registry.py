"""The netmiko_cli dialects by ``device_type``: the one place that knows every :class:`.dialects.Dialect`
(IOS in :mod:`..ios.dialect`, ProCurve in :mod:`..procurve.dialect`). Add a dialect here."""
from __future__ import annotations

from harmless.switch_drivers.ios.dialect import IOS
from harmless.switch_drivers.netmiko_cli.dialects import Dialect
from harmless.switch_drivers.procurve.dialect import PROCURVE

#: netmiko ``device_type`` -> its dialect
DIALECTS: dict[str, Dialect] = {d.device_type: d for d in (IOS, PROCURVE)}


def get_dialect(device_type: str) -> Dialect:
    """The dialect for a netmiko ``device_type``.

    Raises:
        KeyError: no dialect (message lists the supported ones).
    """
    if device_type not in DIALECTS:
        raise KeyError(f"no netmiko_cli dialect for device_type {device_type!r} (supported: {', '.join(DIALECTS)})")
    return DIALECTS[device_type]
