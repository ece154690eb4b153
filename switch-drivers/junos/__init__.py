"""Juniper Junos switch driver (``harmless.switch_drivers.junos``).

- :mod:`.driver`: :class:`~.driver.JunosDriver`, NAPALM ``junos`` (PyEZ over NETCONF): candidate ``load merge``
  of ``set``/``delete`` commands, ``show | compare``, ``commit confirmed N`` + ``commit``, ``load override``
  (restore). Chooses the VLAN syntax the device runs: ELS (``interface-mode``) or the older non-ELS
  ``ethernet-switching`` one (``port-mode``).
- :mod:`.render` + ``templates/harmless.j2``: the tagging config as ``set``/``delete`` commands (pure).
- :mod:`.conf`: Junos syntax, curly text and ``set`` commands, as set paths (pure).
- :mod:`.parse`: per-port VLAN state and VLANs from the configuration (pure, both syntaxes).
"""
