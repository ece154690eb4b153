"""The lab's emulated Arista EOS switch for driver tests (``python -m harmless.emulators.fakeswitch --vendor eos``)."""
from __future__ import annotations

from pathlib import Path

from tests.drivers.conftest import PASSWORD, USERNAME, FakeSwitch, start_fakeswitch

EOS_STARTUP = """\
vlan 100
   name users
!
vlan 101
   name printers
!
interface Ethernet7
   switchport access vlan 100
!
interface Ethernet8
   switchport access vlan 100
!
interface Ethernet9
   switchport mode trunk
   switchport trunk allowed vlan 100-101
!
interface Ethernet12
   shutdown
!
end
"""


def start_eos(tmp_dir: Path, *extra: str) -> FakeSwitch:
    """Start one emulated EOS switch (startup: VLANs 100/101, Et7-8 access 100, Et9 trunk 100-101, Et12 shut)."""
    return start_fakeswitch(tmp_dir, "--vendor", "eos", *extra, startup_config=EOS_STARTUP, hostname="sw2")


def eos_driver(sw: FakeSwitch, **kw):
    """An EosDriver for ``sw`` (eAPI over plain HTTP)."""
    from harmless.switch_drivers.eos.driver import EosDriver

    return EosDriver(sw.host, kw.pop("port", sw.port), kw.pop("username", USERNAME), kw.pop("password", PASSWORD),
                     optional_args={"transport": "http"}, timeout=kw.pop("timeout", 10))
