"""Interface names per driver (canonical spelling, what cannot be a switch port) and the OpenFlow port numbering
scheme (docs/ofport-numbering.md). Pure."""
import pytest

from harmless.switch_drivers.names import (LAG_BASE, OFPORT_MAX, canonical_interface, default_ofport,
                                           interface_problem, is_lag, same_interface)


@pytest.mark.parametrize("driver", ["ios", "netmiko_cli"])
@pytest.mark.parametrize("written,canonical", [
    ("Gi0/1", "GigabitEthernet0/1"), ("gi0/1", "GigabitEthernet0/1"), ("GigabitEthernet0/1", "GigabitEthernet0/1"),
    ("Gig 0/1", "GigabitEthernet0/1"), ("gigabitethernet0/01", "GigabitEthernet0/1"),
    ("Fa0/7", "FastEthernet0/7"), ("fast0/7", "FastEthernet0/7"), ("Te1/1/1", "TenGigabitEthernet1/1/1"),
    ("Tw1/0/3", "TwoGigabitEthernet1/0/3"), ("Twe1/1/1", "TwentyFiveGigE1/1/1"),
    ("Fo1/1/2", "FortyGigabitEthernet1/1/2"),
    ("Hu1/0/49", "HundredGigE1/0/49"), ("Po1", "Port-channel1"), ("port-channel 1", "Port-channel1"),
    ("Port-Channel1", "Port-channel1"), ("Vl10", "Vlan10"), ("Gi0/1.100", "GigabitEthernet0/1.100"),
    ("  Gi0/2 ", "GigabitEthernet0/2"),
    ("T1/0/1", "T1/0/1"),                      # ambiguous (Ten, Two, TwentyFive, Tunnel): left as written
    ("Dot11Radio0", "Dot11Radio0"),            # unknown type: left as written
])
def test_ios_names(driver, written, canonical):
    assert canonical_interface(driver, written) == canonical


@pytest.mark.parametrize("written,canonical", [
    ("Et1", "Ethernet1"), ("eth1", "Ethernet1"), ("e1", "Ethernet1"), ("Ethernet1/1", "Ethernet1/1"),
    ("Po10", "Port-Channel10"), ("port-channel10", "Port-Channel10"), ("Ma1", "Management1"),
    ("Vx1", "Vxlan1"), ("Ethernet3/1/2", "Ethernet3/1/2"),
])
def test_eos_names(written, canonical):
    assert canonical_interface("eos", written) == canonical


@pytest.mark.parametrize("written,canonical", [
    ("ge-0/0/1", "ge-0/0/1"), ("GE-0/0/1", "ge-0/0/1"), ("ge-0/0/1.0", "ge-0/0/1"), ("ge-0/0/1.100", "ge-0/0/1.100"),
    ("xe-1/0/3", "xe-1/0/3"), ("ae0", "ae0"), ("ae0.0", "ae0"), (" et-0/0/48 ", "et-0/0/48"),
])
def test_junos_names(written, canonical):
    assert canonical_interface("junos", written) == canonical


@pytest.mark.parametrize("written,canonical", [
    ("A1", "A1"), ("a1", "A1"), ("1/a1", "1/A1"), ("1/A1", "1/A1"), ("7", "7"), ("07", "7"), ("2/7", "2/7"),
    ("trk1", "Trk1"), ("TRK12", "Trk12"), ("ethernet A7", "A7"),
])
def test_procurve_names(written, canonical):
    assert canonical_interface("procurve", written) == canonical


def test_same_interface_is_per_driver():
    assert same_interface("ios", "Gi0/1", "GigabitEthernet0/1")
    assert same_interface("eos", "Et7", "Ethernet7") and not same_interface("eos", "Et7", "Ethernet7/1")
    assert same_interface("junos", "ge-0/0/1.0", "ge-0/0/1") and not same_interface("junos", "ge-0/0/1", "ge-0/0/10")
    assert same_interface("procurve", "trk1", "Trk1") and not same_interface("procurve", "A1", "1")
    assert not same_interface("ios", "Fa0/1", "Gi0/1") and not same_interface("ios", "Po1", "Gi0/1")


@pytest.mark.parametrize("driver,name,ofport", [
    # today's numbers, kept (single switch, first module)
    ("ios", "FastEthernet0/7", 7), ("ios", "Fa0/10", 10), ("ios", "GigabitEthernet1/0/12", 12), ("ios", "Gi1/7", 7),
    ("eos", "Ethernet7", 7), ("eos", "Et48", 48), ("junos", "ge-0/0/7", 7), ("procurve", "A7", 7),
    ("procurve", "7", 7), ("procurve", "1/A7", 7), ("netmiko_cli", "FastEthernet0/7", 7),
    # stack members, modules, line cards, FPCs
    ("ios", "GigabitEthernet2/0/7", 2007), ("ios", "Gi9/0/48", 9048), ("ios", "Te1/1/3", 103),
    ("ios", "Te2/1/3", 2103), ("ios", "Gi3/7", 3007), ("ios", "GigabitEthernet0/1/0", 100),
    ("eos", "Ethernet3/7", 3007), ("eos", "Ethernet49/1", 49001), ("eos", "Ethernet1/2", 2),
    ("eos", "Ethernet3/12/4", 3124),
    ("junos", "ge-0/1/2", 102), ("junos", "ge-1/0/7", 1007), ("junos", "xe-2/1/3", 2103),
    ("procurve", "B7", 107), ("procurve", "2/A7", 2007), ("procurve", "2/7", 2007), ("procurve", "L24", 1124),
    # LAGs
    ("ios", "Port-channel1", LAG_BASE + 1), ("ios", "Po48", LAG_BASE + 48), ("eos", "Port-Channel2000", 62000),
    ("junos", "ae0", LAG_BASE), ("procurve", "Trk1", LAG_BASE + 1),
])
def test_default_ofport_scheme(driver, name, ofport):
    assert default_ofport(driver, name) == ofport


@pytest.mark.parametrize("driver,name,why", [
    ("ios", "GigabitEthernet0/0", "port 0"), ("junos", "ge-0/0/0", "port 0"), ("ios", "Gi0/1.100", "subinterface"),
    ("junos", "ge-0/0/1.5", "logical unit"), ("junos", "xe-0/0/0:1", "channelised"),
    ("ios", "Gi1/10/1", "no room"), ("ios", "Gi1/0/100", "no room"), ("ios", "Gi0/1/2/3", "more than three"),
    ("ios", "Po5280", "outside 1-65279"), ("procurve", "A100", "no room"), ("ios", "Vlan", "no port number"),
    ("junos", "irb", "not a Junos port name"), ("procurve", "Gi0/1", "not a ProCurve port name"),
])
def test_default_ofport_refusals(driver, name, why):
    with pytest.raises(ValueError, match=why):
        default_ofport(driver, name)


def test_the_scheme_separates_a_whole_stack_and_its_lags():
    ios = ([f"GigabitEthernet{m}/0/{n}" for m in range(1, 10) for n in range(1, 49)]
           + [f"TenGigabitEthernet{m}/1/{n}" for m in range(1, 10) for n in range(1, 9)]
           + [f"Port-channel{n}" for n in range(1, 129)])
    junos = ([f"ge-{f}/0/{n}" for f in range(10) for n in range(1, 48)] + [f"xe-{f}/1/{n}" for f in range(10)
                                                                         for n in range(4)]
             + [f"ae{n}" for n in range(64)])
    for driver, ports in (("ios", ios), ("junos", junos)):
        nums = [default_ofport(driver, p) for p in ports]
        assert len(set(nums)) == len(nums) and all(1 <= n <= OFPORT_MAX for n in nums), driver


@pytest.mark.parametrize("driver,name,problem", [
    ("ios", "ge-0/0/7", "not an IOS interface name"), ("ios", "7", "not an IOS interface name"),
    ("ios", "Trk1", "not an IOS interface name"), ("ios", "Vlan10", "logical"), ("ios", "Loopback0", "logical"),
    ("ios", "Gi0/1.10", "subinterface"), ("eos", "Management1", "management"), ("eos", "ge-0/0/1", "not an EOS"),
    ("junos", "GigabitEthernet0/1", "not a Junos port name"), ("junos", "irb.10", "logical"),
    ("junos", "me0", "logical"), ("junos", "ge-0/0/1.100", "logical unit"),
    ("procurve", "Gi0/1", "not a ProCurve port name"), ("procurve", "A1-A4", "not a ProCurve port name"),
    ("ios", "  ", "empty"),
])
def test_interface_problem(driver, name, problem):
    assert problem in interface_problem(driver, name)


@pytest.mark.parametrize("driver,name", [
    ("ios", "Gi0/1"), ("ios", "FastEthernet0/7"), ("ios", "Port-channel1"), ("ios", "Dot11Radio0"),
    ("netmiko_cli", "Fa0/7"), ("eos", "Et1"), ("eos", "Ethernet49/1"), ("eos", "Po10"), ("junos", "ge-0/0/7"),
    ("junos", "ge-0/0/7.0"), ("junos", "ae0"), ("junos", "mge-0/0/3"), ("procurve", "A1"), ("procurve", "1/A1"),
    ("procurve", "24"), ("procurve", "Trk1"),
])
def test_interface_problem_accepts_switch_ports(driver, name):
    assert interface_problem(driver, name) is None


def test_is_lag():
    assert is_lag("ios", "Po1") and is_lag("eos", "Port-Channel10") and is_lag("junos", "ae0")
    assert is_lag("procurve", "trk2") and not is_lag("ios", "Gi0/1") and not is_lag("junos", "ge-0/0/1")
