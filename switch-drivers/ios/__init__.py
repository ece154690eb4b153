"""Cisco IOS switch driver (``harmless.switch_drivers.ios``).

- :mod:`.driver`: :class:`~.driver.IosDriver`, the NAPALM ``ios`` glue (open, facts, load_merge, commit,
  rollback, restore, and ``apply`` = merge + commit + verified restore on failure).
- :mod:`.render` + ``templates/harmless.j2``: the tagging config (pure).
- :mod:`.parse`: per-port VLAN state from running-config text (pure, ciscoconfparse2).
- :mod:`.vids`: IOS VLAN-list syntax ``107,110-112`` (pure).
"""
