"""Faucet's integration-test runner (``clib.clib_mininet_test_main``) in hardware-switch mode, adapted to a machine
without the openvswitch and 8021q kernel modules, netem or ebtables.

Runs in the suite's own virtualenv (``tests/interop/faucethw.py install``), never in HARMLESS's: it imports Faucet's
``clib`` and ``tests/integration`` from the unpacked sdist. ``faucethw.py run`` starts it inside the test host's
network namespace with ``OVS_RUNDIR`` pointing at a private ovsdb/ovs-vswitchd (mininet's patch-panel bridge), so
nothing here touches the system's OVS or another namespace.

Usage: ``python hw_main.py SRC_DIR CONFIG_DIR LOG_DIR TESTS [mininet_main arguments ...]``; ``TESTS``: comma-separated
``Class`` (all its test methods) or ``Class.method`` (that method only; Faucet's runner selects whole classes).

Changes to Faucet's runner, each the replacement that works on this kind of machine
(shared notes: faucet-suite-on-this-machine.md):

* ``OVS_TYPE = "user"``: mininet's bridges use the userspace datapath (``datapath_type=netdev``), no kernel module.
* TX checksum offload off on the mininet hosts' interfaces: the userspace datapath does not complete partial
  checksums, so TCP between hosts (``nc``, ``iperf``) failed on every switch.
* ``DELAY = None`` on the host links: no ``sch_netem`` (the 1 ms delay is the only thing lost).
* ``_block_non_faucet_packets``: instead of ``ebtables`` (no ``filter`` table here; a flush would also be global),
  each dp_port is brought up without addresses and with IPv6 off, so the test host's own stack sends nothing on it.
* The load-average gate (cores x 1.5) is raised: other work on the machine must not fail a test by itself.
* Host and switch names (``u011``, ``s01``, ...) are shifted by ``$FAUCETHW_SID_OFFSET`` serial numbers: two runs
  at the same time (one per switch) would otherwise both create the named network namespace of a host (``ip netns add
  u021`` in the hairpin tests).
* ``make_suite`` keeps only the requested methods of a class.
* ``hw_switch_config.yaml`` is read from ``CONFIG_DIR`` and the test logs go to ``LOG_DIR`` (not ``/etc/faucet`` and
  ``/var/tmp``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile


def quiet_dp_ports(self) -> None:
    """``FaucetTestBase._block_non_faucet_packets`` without ebtables: dp_ports up, no address, IPv6 off."""
    for port in self.switch_map.values():
        for argv in (["ip", "link", "set", "dev", port, "up"], ["ip", "addr", "flush", "dev", port],
                     ["sysctl", "-qw", f"net.ipv6.conf.{port}.disable_ipv6=1"]):
            p = subprocess.run(argv, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, msg=f"{' '.join(argv)}: {p.stdout}{p.stderr}")


def no_tx_offload(start_net):
    """``FaucetTestBase.start_net`` that then turns TX checksum offload off on every mininet host interface: the
    userspace datapath forwards a frame as it is, so a TCP segment with a partial checksum (veth offload) would
    arrive unfinished and be dropped by the receiving host (``nc``/``iperf`` tests). The kernel datapath that Faucet's
    suite assumes completes the checksum."""
    def start(self):
        start_net(self)
        for host in self.net.hosts:
            for intf in host.intfList():
                host.cmd("ethtool -K %s tx off" % intf)
    return start


def only_methods(make_suite, wanted: dict[str, set[str]]):
    """``make_suite`` that drops the test methods of a class not in ``wanted[class]`` (absent/empty: all)."""
    def make(tc_class, *args):
        suite = make_suite(tc_class, *args)
        keep = wanted.get(tc_class.__name__)
        if not keep:
            return suite
        out = type(suite)()
        out.addTests([t for t in suite if t._testMethodName in keep])
        return out
    return make


def shifted_sid_prefix(get_sid_prefix, offset: int):
    """``FaucetSwitchTopo._get_sid_prefix`` for serial number + ``offset`` (62 x 62 two-character prefixes)."""
    return staticmethod(lambda ports_served: get_sid_prefix(ports_served + offset))


def patch(config_dir: str, log_dir: str, wanted: dict[str, set[str]]) -> None:
    """Apply the changes listed in the module docstring to Faucet's clib."""
    from clib import clib_mininet_test_main as main
    from clib import mininet_test_base, mininet_test_topo

    mininet_test_base.FaucetTestBase.OVS_TYPE = "user"
    mininet_test_base.FaucetTestBase._block_non_faucet_packets = quiet_dp_ports
    mininet_test_base.FaucetTestBase.start_net = no_tx_offload(mininet_test_base.FaucetTestBase.start_net)
    mininet_test_topo.FaucetSwitchTopo.DELAY = None
    offset = int(os.environ.get("FAUCETHW_SID_OFFSET", "0"))
    mininet_test_topo.FaucetSwitchTopo._get_sid_prefix = shifted_sid_prefix(
        mininet_test_topo.FaucetSwitchTopo._get_sid_prefix, offset)
    main.max_loadavg = lambda: 64
    main.CONFIG_FILE_DIRS = [config_dir]
    main.make_suite = only_methods(main.make_suite, wanted)
    mkdtemp = tempfile.mkdtemp
    main.tempfile = type("tempfile", (), {"mkdtemp": staticmethod(
        lambda prefix=None, dir=None: mkdtemp(prefix=prefix, dir=log_dir))})


def main() -> None:
    src, config_dir, log_dir, tests, *args = sys.argv[1:]
    wanted: dict[str, set[str]] = {}
    for t in tests.split(","):
        cls, _, meth = t.partition(".")
        wanted.setdefault(cls, set()).update([meth] if meth else [])
    integration = os.path.join(src, "tests", "integration")
    sys.path[:0] = [integration, src]
    os.environ.setdefault("FAUCET_DIR", os.path.join(src, "faucet"))
    os.chdir(integration)
    patch(config_dir, log_dir, wanted)
    from clib.clib_mininet_test_main import test_main
    import mininet_tests   # noqa: F401  (the test classes, found by module name)
    sys.argv = ["mininet_main.py", *args, *wanted]
    test_main([mininet_tests.__name__])


if __name__ == "__main__":
    main()
