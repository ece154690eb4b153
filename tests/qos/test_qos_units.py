"""Per-port QoS without OVS: inventory validation, translator flows, OVSDB commands, the VLAN classifier, the
overlay of live settings on ``up`` (issue #15). The classifier's bytecode is run on real frames (scapy) by a small
classic-BPF interpreter, so the test asserts which frames land in the port's queue, not the program text."""
from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether

from harmless import openflow as of
from harmless.errors import InputError, OvsError
from harmless.inventory import parse_inventory
from harmless.otc import qos as q
from harmless.otc.flows import translator_flows
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from harmless import state as st
from harmless.qos.deploy import check_kernel, overlay
from harmless.qos.model import PortQos
from tests.lib.fakeoftable import FakeOFTable

INV = """\
server: {datapath: DATAPATH}
switches:
- name: sw1
  driver: ios
  host: 127.0.0.1
  username: admin
  password_env: HL_TEST_PW
  trunks: [{switch_port: Gi0/1, server_interface: hl-t0, type: TRUNKTYPE EXTRA}]
  access_ports:
  - FastEthernet0/7
  - {interface: FastEthernet0/10, qos: QOS}
"""


def inv(qos: str, trunk: str = "system", datapath: str = "netdev", extra: str = ""):
    return parse_inventory(INV.replace("QOS", qos).replace("TRUNKTYPE", trunk).replace("DATAPATH", datapath)
                           .replace(" EXTRA", extra), "inv.yaml")


def test_valid_qos_reaches_the_model():
    i = inv("{ingress_mbps: 20, egress_mbps: 50, egress_burst_kb: 400, scheduler: hfsc}")
    got = PortQos.from_settings(i.switches[0].access_ports[1].qos)
    assert got == PortQos(20, None, 50, 400, "hfsc")
    assert got.meter_kbps == 20_000 and got.meter_burst_kb == 6000 and got.egress_bps == 50_000_000


@pytest.mark.parametrize("qos,trunk,datapath,extra,field,words", [
    ("{egress_mbps: 50}", "afxdp", "netdev", "", "qos.egress_mbps", "AF_XDP"),
    ("{egress_mbps: 50, scheduler: hfsc}", "dpdkvhostuserclient", "dpdk", ", vhost_server_path: /tmp/x.sock",
     "qos.scheduler", "trtcm-policer"),
    ("{egress_mbps: 0}", "system", "netdev", "", "qos.egress_mbps", "greater than 0"),
    ("{ingress_mbps: 200000}", "system", "netdev", "", "qos.ingress_mbps", "less than or equal"),
])
def test_refused_at_validation(qos, trunk, datapath, extra, field, words):
    with pytest.raises(InputError) as e:
        inv(qos, trunk, datapath, extra)
    assert f"switches[0].access_ports[1].{field}" in str(e.value) and words in str(e.value)


def test_afxdp_and_dpdk_take_what_they_can_enforce():
    assert inv("{ingress_mbps: 10}", "afxdp").switches[0].access_ports[1].qos.ingress_mbps == 10
    assert inv("{egress_mbps: 10}", "dpdk", "dpdk", ", devargs: net_null0").switches[0].trunks[0].type == "dpdk"


def plan(qos7=None, qos10=None, trunk_type="system") -> Plan:
    ports = (PortPlan("FastEthernet0/7", 7, 107, "Gi0/1", "harmless-sw1-p7", qos=qos7),
             PortPlan("FastEthernet0/10", 10, 110, "Gi0/1", "harmless-sw1-p10", qos=qos10))
    return Plan((SwitchPlan("sw1", "br-of-sw1", "0" * 15 + "1", ("OpenFlow13",), (), ports,
                            (TrunkPlan("Gi0/1", "hl-t0", trunk_type, (), (107, 110)),), index=1),))


def _actions(p: Plan) -> dict[str, tuple[str, ...]]:
    return {f.match.to_ofctl(): tuple(a.to_ofctl() for a in f.actions) for f in translator_flows(p)}


def test_flows_carry_meter_and_set_queue_only_where_configured():
    a = _actions(plan(PortQos(ingress_mbps=20), PortQos(egress_mbps=50)))
    assert a["in_port=1900,dl_vlan=107"] == ("meter:1007", "pop_vlan", "output:1007")
    assert a["in_port=1007"] == ("push_vlan:0x8100", "set_field:4203->vlan_vid", "output:1900")
    assert a["in_port=1900,dl_vlan=110"] == ("pop_vlan", "output:1010")
    assert a["in_port=1010"] == ("set_queue:10", "push_vlan:0x8100", "set_field:4206->vlan_vid", "output:1900")
    assert q.wanted_meters(plan(PortQos(ingress_mbps=20))) == {1007: (20_000, 6000)}
    # packet fate on br-otc (loaded from the exact ovs-ofctl text): the meter and the queue sit on each port's path
    otc = FakeOFTable().add_ofctl("\n".join(f.to_ofctl() for f in
                                            translator_flows(plan(PortQos(ingress_mbps=20), PortQos(egress_mbps=50)))))
    f = otc.fate(1900, vlan_vid=of.vid_present(107))
    assert f.meters == [q.meter_id(1, 7)] and f.ports == [1007] and "queue_id" not in f.on(1007)
    f = otc.fate(1010)
    assert f.meters == [] and f.on(1900)["queue_id"] == q.queue_id(10) and f.on(1900)["vlans"] == ((0x8100, 110),)
    assert otc.fate(1900, vlan_vid=of.vid_present(110)).meters == [] and "queue_id" not in otc.fate(1007).on(1900)


EMPTY = {"ports": {"hl-t0": None}, "qos": {}, "queue": {}}


def test_ovsdb_commands_create_update_and_destroy():
    p = plan(None, PortQos(egress_mbps=50, egress_burst_kb=100))
    cmds = q.ovsdb_commands(q.wanted_trunks(p), EMPTY)
    flat = [" ".join(c) for c in cmds]
    assert any("create Queue other_config:max-rate=50000000 other_config:min-rate=50000000 "
               "other_config:burst=100000 external_ids:harmless=qos" in c for c in flat)
    assert any("create QoS type=linux-htb" in c and "queues:10=@hq1" in c for c in flat)
    assert flat[-1].startswith("set Port hl-t0 qos=@hqos")
    rows = {"ports": {"hl-t0": "Q1"}, "qos": {"Q1": {"type": "linux-htb", "queues": {10: "U10", 7: "U7"},
                                                     "external_ids": {"harmless": "qos"}}},
            "queue": {"U10": {"external_ids": {"harmless": "qos"}}, "U7": {"external_ids": {"harmless": "qos"}},
                      "OLD": {"external_ids": {"harmless": "qos"}}, "USER": {"external_ids": {}}}}
    flat = [" ".join(c) for c in q.ovsdb_commands(q.wanted_trunks(p), rows)]
    assert "set Queue U10 other_config:max-rate=50000000 other_config:min-rate=50000000 " \
           "other_config:burst=100000 external_ids:harmless-port=FastEthernet0/10" in flat
    assert "remove QoS Q1 queues 7" in flat and "destroy Queue U7" in flat and "destroy Queue OLD" in flat
    assert not any("USER" in c for c in flat) and not any("create QoS" in c for c in flat)
    # nothing wanted: the port is detached and every row HARMLESS made destroyed (no orphans)
    flat = [" ".join(c) for c in q.ovsdb_commands({}, rows)]
    assert flat[0] == "clear Port hl-t0 qos" and "destroy QoS Q1" in flat
    assert {"destroy Queue U10", "destroy Queue U7", "destroy Queue OLD"} <= set(flat)


def test_foreign_qos_row_is_never_overwritten():
    rows = {"ports": {"hl-t0": "X"}, "qos": {"X": {"type": "linux-htb", "queues": {}, "external_ids": {}}},
            "queue": {}}
    with pytest.raises(OvsError, match="did not make"):
        q.ovsdb_commands(q.wanted_trunks(plan(None, PortQos(egress_mbps=5))), rows)


def test_dpdk_trunk_gets_trtcm_policer_queue():
    w = q.wanted_trunks(plan(None, PortQos(egress_mbps=80), trunk_type="dpdkvhostuserclient"))
    assert w["hl-t0"]["type"] == "trtcm-policer"
    assert q.queue_config("trtcm-policer", PortQos(egress_mbps=80)) == ["cir=10000000", "cbs=100000", "eir=0",
                                                                        "ebs=0"]     # 10 ms at 80 Mbit/s
    assert q.queue_config("trtcm-policer", PortQos(egress_mbps=0.1))[1] == "cbs=2048"
    assert q.queue_config("linux-htb", PortQos(egress_mbps=50)) == ["max-rate=50000000", "min-rate=50000000",
                                                                    "burst=500000"]


def run_cbpf(bytecode: str, pkt: bytes) -> int:
    """A classic-BPF interpreter for the instructions :func:`bpf_bytecode` uses (ldh abs, and, jeq, ret)."""
    ins = [tuple(int(x) for x in i.split()) for i in bytecode.split(",")[1:]]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == 0x28:
            acc = struct.unpack("!H", pkt[k:k + 2])[0]
        elif code == 0x54:
            acc &= k
        elif code == 0x15:
            pc += jt if acc == k else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


def test_classifier_selects_the_ports_vid_only():
    prog = q.bpf_bytecode(110)
    payload = IP(dst="10.0.0.10") / UDP()
    assert run_cbpf(prog, bytes(Ether() / Dot1Q(vlan=110) / payload)) == 0xFFFFFFFF
    assert run_cbpf(prog, bytes(Ether() / Dot1AD(vlan=110) / Dot1Q(vlan=7) / payload)) == 0xFFFFFFFF
    assert run_cbpf(prog, bytes(Ether() / Dot1Q(vlan=107) / payload)) == 0
    assert run_cbpf(prog, bytes(Ether() / Dot1Q(vlan=110 + 4096 * 0, prio=5) / payload)) == 0xFFFFFFFF
    assert run_cbpf(prog, bytes(Ether() / payload)) == 0
    assert q.tc_class(10) == "1:b" and q.tc_class(7) == "1:8"


def test_live_setting_survives_up_until_the_inventory_changes():
    live_q = {"ingress_mbps": 20.0, "ingress_burst_kb": None, "egress_mbps": None, "egress_burst_kb": None,
              "scheduler": "htb"}
    state = st.DeploymentState(inventory="inv.yaml",
                               qos_live={"sw1": {"FastEthernet0/7": {"qos": live_q, "inventory": None}}})
    p, kept = overlay(plan(), state)
    assert p.switches[0].ports[0].qos == PortQos(ingress_mbps=20.0) and "FastEthernet0/7" in kept["sw1"]
    p, kept = overlay(plan(PortQos(egress_mbps=5)), state)        # the inventory changed since: it wins
    assert p.switches[0].ports[0].qos == PortQos(egress_mbps=5) and kept == {}


def test_meter_dump_parsing():
    text = ("OFPST_METER_CONFIG reply (OF1.3) (xid=0x2):\nmeter=1007 kbps burst stats bands=\n"
            "type=drop rate=10000 burst_size=3000\n")
    stats = ("OFPST_METER reply (OF1.3) (xid=0x2):\nmeter:1007 flow_count:1 packet_in_count:12 byte_in_count:900 "
             "duration:3.1s bands:\n0: packet_count:4 byte_count:300\n")
    assert q.parse_meters(text) == {1007: {"kbps": 10000, "burst_kb": 3000}}
    assert q.parse_meters(stats) == {1007: {"packets": 12, "bytes": 900, "band_drops": 4}}


def test_plan_round_trips_qos_through_the_state():
    p = plan(PortQos(ingress_mbps=20, ingress_burst_kb=500), PortQos(egress_mbps=50, scheduler="hfsc"))
    again = Plan.from_dict(st.jsonable(p.to_dict()))
    assert again == p and again.switches[0].ports[1].qos.scheduler == "hfsc"
    old = st.jsonable(p.to_dict())
    for port in old["switches"][0]["ports"]:
        del port["qos"]                                   # a state written before issue #15
    assert Plan.from_dict(old).switches[0].ports[0].qos is None


def test_up_refuses_hfsc_on_a_kernel_without_it(monkeypatch):
    i = inv("{egress_mbps: 20, scheduler: hfsc}")
    monkeypatch.setattr(q, "hfsc_supported", lambda: (False, "the kernel has no HFSC scheduler"))
    with pytest.raises(InputError) as e:
        check_kernel(i, "inv.yaml")
    assert "switches[0].access_ports[1].qos.scheduler" in str(e.value) and "HFSC" in str(e.value)
    monkeypatch.setattr(q, "hfsc_supported", lambda: (True, "ok"))
    check_kernel(i, "inv.yaml")


def test_auto_trunk_with_egress_shaping_runs_af_packet():
    """type auto (the default) + egress QoS: validated like a kernel trunk, preselected AF_PACKET, linux-htb row."""
    from harmless.otc import trunks
    i = inv("{egress_mbps: 50}", "auto")
    assert i.switches[0].trunks[0].type == "auto" and i.switches[0].access_ports[1].qos.egress_mbps == 50
    shaped = plan(qos10=PortQos(None, None, 50, None, "htb"), trunk_type="auto")
    sp = shaped.switches[0]
    assert trunks.shaped(sp, sp.trunks[0])
    assert trunks.interface_settings(sp.trunks[0], {"hl-t0": "system"}) == ('""', ())
    assert q.wanted_trunks(shaped)["hl-t0"]["type"] == "linux-htb"
    policed = plan(qos10=PortQos(20, None, None, None, "htb"), trunk_type="auto").switches[0]
    assert not trunks.shaped(policed, policed.trunks[0])          # ingress only: AF_XDP stays possible


def test_live_checks_name_the_option_and_refuse_egress_on_a_running_af_xdp_trunk(monkeypatch):
    from harmless.qos import live
    sp = plan(trunk_type="auto").switches[0]
    with pytest.raises(InputError) as e:                 # auto trunk on AF_XDP now: egress refused, fix named
        live._check_enforceable(sp, 1, PortQos(None, None, 50, None, "htb"), False, "afxdp")
    assert "--egress" in str(e.value) and "AF_XDP" in str(e.value) and "harmless up" in str(e.value)
    live._check_enforceable(sp, 1, PortQos(None, None, 50, None, "htb"), False, "")   # on AF_PACKET: fine
    live._check_enforceable(sp, 1, PortQos(20, None, None, None, "htb"), False, "afxdp")  # ingress: a meter, fine
    monkeypatch.setattr(live, "_change", lambda sw, itf, make, sched, progress, dry_run: make(None))
    for opt, kw in (("--ingress-burst", {"ingress_mbps": 10, "ingress_burst_kb": 1}),
                    ("--egress-burst", {"egress_mbps": 10, "egress_burst_kb": 1}),
                    ("--egress", {"egress_mbps": -5})):
        with pytest.raises(InputError) as e:
            live.set_qos("sw1", "FastEthernet0/10", **kw)
        assert str(e.value).startswith(opt + ":"), str(e.value)


def test_auto_trunk_resolved_to_af_packet_drops_the_af_xdp_option():
    from harmless.otc.bridges import convergence_commands
    p = plan(trunk_type="auto")
    on_system = convergence_commands(p, {}, {}, {}, frozenset(), {"hl-t0": "system"})
    assert ["remove", "Interface", "hl-t0", "options", "xdp-mode"] in on_system
    assert any(c[:3] == ["set", "Interface", "hl-t0"] and 'type=""' in c for c in on_system)
    on_xdp = convergence_commands(p, {}, {}, {}, frozenset(), {})
    assert any(c[:3] == ["set", "Interface", "hl-t0"] and "options:xdp-mode=best-effort" in c for c in on_xdp)
    assert not any(c[:2] == ["remove", "Interface"] for c in on_xdp)
