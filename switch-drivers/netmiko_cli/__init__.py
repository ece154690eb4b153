"""netmiko line-wise fallback driver (``harmless.switch_drivers.netmiko_cli``), for a device NAPALM cannot commit to.

- :mod:`.driver`: :class:`~.driver.NetmikoCliDriver` (``send_config_set``; diff, undo and verification by us).
- :mod:`.linediff`: the pure line/block diff and undo computations (IOS-style indented config).
- :mod:`.dialects`: the per-netmiko-``device_type`` syntax record (:class:`~.dialects.Dialect`); the dialects live
  with their OS (``..ios.dialect``, ``..procurve.dialect``) and :mod:`.registry` finds them by ``device_type``.
"""
