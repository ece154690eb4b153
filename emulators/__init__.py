"""Emulated legacy switches for the lab, the tests and the demo (test and lab infrastructure, not product code).

The real NAPALM/netmiko drivers talk to these over loopback, so the product's code paths run unchanged:

- :mod:`harmless.emulators.ios`: Cisco IOS (fake-switches + what NAPALM ``ios`` needs: flash, archive,
  commit-confirm, ``configure replace``, fault injection), SSH.
- :mod:`harmless.emulators.eos`: Arista EOS (eAPI over HTTP, configuration sessions, commit timer).
- :mod:`harmless.emulators.procurve`: HPE ProCurve / Aruba-OS CLI for netmiko ``hp_procurve``, SSH
  (``python -m harmless.emulators.procurve``).
- :mod:`harmless.emulators.dataplane`: the emulated switch's VLAN config mirrored onto an OVS bridge (802.1Q).
- :mod:`harmless.emulators.process`: pid/status files, password-redacting log filter, the ``ready`` line.
- :mod:`harmless.emulators.fakeswitch`: the lab switch process, ``python -m harmless.emulators.fakeswitch
  [--vendor ios|eos]`` (started by :mod:`harmless.lab.topology`).

Imports go one way: fakeswitch → ios/eos → dataplane/process; nothing here imports the CLI or the lab.
"""
