"""HPE ProCurve / Aruba-OS switch driver (``harmless.switch_drivers.procurve``), over netmiko ``hp_procurve``.

ProCurve configuration is VLAN-centric (``vlan 107`` / ``untagged 7`` / ``tagged 25``), unlike IOS's
port-centric ``switchport`` lines.

- :mod:`.driver`: :class:`~.driver.ProcurveDriver` (the netmiko line-wise workflow of ``..netmiko_cli``).
- :mod:`.parse`: running config → VLAN table and per-port state, port-list syntax (pure).
- :mod:`.model`: the per-port model (``harmless ports``) and the block parser both build on (pure).
- :mod:`.render` + ``templates/harmless.j2``: the tagging config (pure).
- :mod:`.dialect`: VLAN-semantic diff and line-wise restore (pure).

Why netmiko and not a community NAPALM driver: napalm-procurve's last release is 0.6.0 (2020-07) and
napalm-arubaos-switch 0.2.0 (2021-12, REST only), while netmiko's ``hp_procurve`` ships with netmiko 4.x.
"""
