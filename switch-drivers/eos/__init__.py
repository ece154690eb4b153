"""Arista EOS switch driver (``harmless.switch_drivers.eos``).

- :mod:`.driver`: :class:`~.driver.EosDriver`, NAPALM ``eos`` over eAPI: every change goes through an EOS
  configuration session (``configure session``), so a rejected line never reaches the running config;
  commit-confirm is ``configure session X commit timer hh:mm:ss``; restore is a session replace
  (``rollback clean-config`` + the saved text).
- :mod:`.render` + ``templates/harmless.j2``: the tagging config (pure).
- :mod:`.parse`: per-port VLAN state and VLANs from running-config text (pure, ciscoconfparse2 ``ios`` syntax).
- :mod:`.vids`: EOS VLAN-list syntax ``107-108,110`` (pure).
"""
