"""Active/standby servers (issue #23): the inventory, the pair's plan and device roles, the take-over decision, the
agents' authenticated messages, the heartbeat's translator flows and BFD settings, the fencing candidate's line
order on IOS, and the demo's loss-window arithmetic. No root, no OVS (the lab tests are tests/lab/test_ha_lab.py)."""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import replace

import pytest
import yaml

from harmless import openflow as of
from harmless.errors import InputError
from harmless.ha import wire
from harmless.ha.decide import Sight, decide
from harmless.ha.demo import loss_window
from harmless.ha.failover import still_migrated
from harmless.ha.plan import (choose_heartbeat_vid, device_role, local_inventory, pair_switch, peer_view,
                              refuse_on_standby, this_server, with_roles)
from harmless.ha.sense import parse_monitor_line
from harmless.inventory import parse_inventory
from harmless.otc.bridges import activation_commands, convergence_commands, heartbeat_mac
from harmless.otc.flows import heartbeat_ofport, translator_flows
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from harmless.switch_drivers.base import DeviceFacts, PortVlanState
from harmless.switch_drivers.ios.render import render_config
from tests.lib.fakeoftable import FakeOFTable

HA = {
    "server": {"datapath": "netdev", "ovs": "private"},
    "ha": {"servers": [{"name": "a", "agent": "192.0.2.11:7450", "netns": "srv-a"},
                       {"name": "b", "agent": "192.0.2.12:7450"}],
           "secret_env": "HL_HA_SECRET"},
    "switches": [{
        "name": "sw1", "driver": "ios", "host": "192.0.2.10", "username": "admin", "password_env": "HL_TEST_PW",
        "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1", "server": "a"},
                   {"switch_port": "GigabitEthernet0/2", "server_interface": "eth1", "server": "b"}],
        "access_ports": ["FastEthernet0/7", "FastEthernet0/8"], "vlan_range": "100-199",
        "openflow": {"controllers": ["tcp:192.0.2.50:6653"]}}],
}


def inv_text(**changes) -> str:
    d = yaml.safe_load(yaml.safe_dump(HA))
    for path, value in changes.items():
        cur = d
        keys = path.split(".")
        for k in keys[:-1]:
            cur = cur[int(k)] if k.isdigit() else cur[k]
        last = int(keys[-1]) if keys[-1].isdigit() else keys[-1]
        if value is DELETE:
            del cur[last]
        else:
            cur[last] = value
    return yaml.safe_dump(d)


DELETE = object()


# ----------------------------------------------------------------------------- inventory
def test_an_ha_inventory_parses_and_each_server_builds_its_own_trunk():
    inv = parse_inventory(inv_text(), "inv.yaml")
    assert inv.ha.detect_ms == 300 and inv.ha.peer("a").name == "b"
    a = local_inventory(inv, "a")
    assert a.server.netns == "srv-a" and [t.server for t in a.switches[0].trunks] == ["a", "b"]
    b = local_inventory(inv, "b", own_trunks_only=True)
    assert b.server.netns is None and [t.switch_port for t in b.switches[0].trunks] == ["GigabitEthernet0/2"]
    assert local_inventory(inv, None) is inv


@pytest.mark.parametrize("change,field,words", [
    ({"switches.0.trunks.1.server": "c"}, "switches[0].trunks[1].server", "not one of ha.servers"),
    ({"switches.0.trunks.1.server": "a"}, "switches[0].trunks[1].server", "already has trunks[0]"),
    ({"switches.0.trunks.1": DELETE}, "switches[0].trunks", "server b has no trunk"),
    ({"switches.0.trunks.0.server": DELETE}, "switches[0].trunks[0].server", "every trunk names its server"),
    ({"switches.0.driver": "procurve"}, "switches[0].driver", "cannot move HARMLESS's VLANs"),
    ({"switches.0.trunks.0.shared": True}, "switches[0].trunks[0].shared", "shared trunk"),
    ({"switches.0.access_ports": [{"interface": "FastEthernet0/7", "trunk": "GigabitEthernet0/1"}]},
     "switches[0].access_ports[0].trunk", "active server's trunk carries every port"),
    ({"switches.0.access_ports": [{"interface": "FastEthernet0/7", "vid": 150}], "switches.0.heartbeat_vid": 150},
     "switches[0].heartbeat_vid", "access_ports[0]'s"),
    ({"switches.0.heartbeat_vid": 1003}, "switches[0].heartbeat_vid", "reserved on IOS"),
    ({"switches.0.vlan_range": "100-101"}, "switches[0].vlan_range", "no VID for the heartbeat"),
    ({"ha.servers.1.name": "a"}, "ha.servers[1].name", "also ha.servers[0]"),
    ({"ha.servers.1.agent": "192.0.2.11:7450"}, "ha.servers[1].agent", "also ha.servers[0]'s agent"),
    ({"ha.servers.1.agent": "192.0.2.12"}, "ha.servers[1].agent", "not HOST:PORT"),
    ({"ha.servers.1.agent": "192.0.2.12:70000"}, "ha.servers[1].agent", "not a TCP/UDP port"),
    ({"ha.servers.1.agent": "[2001:db8::zz]:7450"}, "ha.servers[1].agent", "not an IPv6 address"),
    ({"ha.secret_file": "/etc/x"}, "ha.secret_env", "exactly one"),
    ({"ha.secret_env": "not a name"}, "ha.secret_env", "not an environment variable name"),
    ({"ha": DELETE}, "switches[0].trunks[0].server", "no ha: section"),
])
def test_bad_ha_inventories_are_refused_naming_the_field(change, field, words):
    with pytest.raises(InputError) as e:
        parse_inventory(inv_text(**change), "inv.yaml")
    assert e.value.where == f"inv.yaml: {field}" and words in e.value.problem, str(e.value)
    assert e.value.fix


def test_heartbeat_vid_without_ha_is_refused():
    text = inv_text(**{"ha": DELETE, "switches.0.trunks.0.server": DELETE, "switches.0.trunks.1": DELETE,
                       "switches.0.heartbeat_vid": 150})
    with pytest.raises(InputError, match="only used with an ha: section"):
        parse_inventory(text, "inv.yaml")


def test_this_server_comes_from_the_option_or_the_environment(monkeypatch):
    inv = parse_inventory(inv_text(), "inv.yaml")
    monkeypatch.delenv("HARMLESS_HA_SERVER", raising=False)
    with pytest.raises(InputError, match="not which one this is") as e:
        this_server(inv, "inv.yaml")
    assert "HARMLESS_HA_SERVER" in e.value.fix
    monkeypatch.setenv("HARMLESS_HA_SERVER", "b")
    assert this_server(inv, "inv.yaml") == "b" and this_server(inv, "inv.yaml", "a") == "a"
    with pytest.raises(InputError, match="not one of"):
        this_server(inv, "inv.yaml", "c")


def test_the_secret_must_be_long_enough(monkeypatch):
    with pytest.raises(InputError, match="fewer than 16"):
        wire.key("short")
    assert wire.key("x" * 16) == b"x" * 16


# ----------------------------------------------------------------------------- the pair's plan and device roles
def sp_active() -> SwitchPlan:
    """sw1 as server a sees it, active: its trunk Gi0/1, the peer's Gi0/2, heartbeat VLAN 199."""
    return SwitchPlan("sw1", "br-of-sw1", "0000000000000001", ("OpenFlow13",), ("tcp:192.0.2.50:6653",),
                      (PortPlan("FastEthernet0/7", 7, 107, "GigabitEthernet0/1", "harmless-sw1-p7"),
                       PortPlan("FastEthernet0/8", 8, 108, "GigabitEthernet0/1", "harmless-sw1-p8")),
                      (TrunkPlan("GigabitEthernet0/1", "eth1", "system", (), (107, 108)),), index=1,
                      heartbeat_vid=199, server="a", peer="b",
                      peer_trunks=(TrunkPlan("GigabitEthernet0/2", "eth1", "system", (), (107, 108)),))


def test_trunk_changes_take_the_vlans_off_the_idle_trunk_first():
    a = sp_active()
    assert [(t.interface, t.vids) for t in a.trunk_changes()] == [
        ("GigabitEthernet0/2", (199,)), ("GigabitEthernet0/1", (107, 108, 199))]
    b = peer_view(a, "b")                       # the same device config, from the standby
    assert b.standby and b.server == "b" and b.peer == "a" and b.live_controllers == ()
    assert [p.trunk for p in b.ports] == ["GigabitEthernet0/2"] * 2
    assert b.trunk_changes() == a.trunk_changes()
    take_over = replace(b, standby=False)       # the fencing candidate: b's trunk carries them, a's loses them first
    assert [(t.interface, t.vids) for t in take_over.trunk_changes()] == [
        ("GigabitEthernet0/1", (199,)), ("GigabitEthernet0/2", (107, 108, 199))]
    assert peer_view(b, "a") == a and a.live_controllers == a.controllers
    assert with_roles(Plan((a,)), {"sw1": True}).switches[0].standby


def test_the_fencing_candidate_on_ios_puts_the_losing_trunk_first():
    b = replace(peer_view(sp_active(), "b"), standby=False)
    text = render_config(b.access_changes(), b.trunk_changes())
    lose = text.index("interface GigabitEthernet0/1")
    gain = text.index("interface GigabitEthernet0/2")
    assert lose < gain and "switchport trunk allowed vlan 199\n" in text[lose:gain]
    assert "switchport trunk allowed vlan 107,108,199" in text[gain:]
    assert text.index("interface FastEthernet0/7") < lose        # the ports' own VLANs, a no-op on the device
    assert "vlan 199\n name harmless-sw1-hb\n" in text            # the heartbeat VLAN is HARMLESS's own by name


def test_the_plan_with_its_pair_fields_round_trips_and_old_states_read():
    p = Plan((sp_active(),))
    assert Plan.from_dict(p.to_dict()) == p
    old = p.to_dict()
    for k in ("heartbeat_vid", "heartbeat_ms", "heartbeat_mult", "server", "peer", "peer_trunks", "standby"):
        del old["switches"][0][k]
    sp = Plan.from_dict(old).switches[0]
    assert sp.heartbeat_vid is None and sp.peer_trunks == () and not sp.standby


def ports(gi1, gi2, p7=107, p8=108) -> dict[str, PortVlanState]:
    return {"FastEthernet0/7": PortVlanState("FastEthernet0/7", "access", p7),
            "FastEthernet0/8": PortVlanState("FastEthernet0/8", "access", p8),
            "GigabitEthernet0/1": PortVlanState("GigabitEthernet0/1", "trunk", allowed_vids=gi1),
            "GigabitEthernet0/2": PortVlanState("GigabitEthernet0/2", "trunk", allowed_vids=gi2)}


@pytest.mark.parametrize("gi1,gi2,role", [
    ((107, 108, 199), (199,), "active"), ((199,), (107, 108, 199), "standby"), ((199,), (199,), "neither"),
    ((107, 199), (108, 199), "both"), (None, (199,), "active"),
])
def test_the_device_says_who_forwards(gi1, gi2, role):
    assert device_role(sp_active(), ports(gi1, gi2)) == role
    flipped = {"active": "standby", "standby": "active"}.get(role, role)
    assert device_role(peer_view(sp_active(), "b"), ports(gi1, gi2)) == flipped


def test_a_switch_given_back_is_never_taken_over():
    sp = sp_active()
    assert still_migrated(sp, ports((199,), (107, 108, 199)), lambda n: n)
    assert not still_migrated(sp, ports((199,), (199,), p7=100, p8=100), lambda n: n)


def test_heartbeat_vid_is_the_highest_free_one_and_stays():
    inv = parse_inventory(inv_text(), "inv.yaml")
    sw = inv.switches[0]
    facts = DeviceFacts("sw1", "", "", (), {1: "default", 199: "mgmt", 100: "users"})
    assert choose_heartbeat_vid(sw, facts, {107, 108}, None, "w") == 198
    assert choose_heartbeat_vid(sw, facts, {107, 108}, 150, "w") == 150          # the previous plan's
    with pytest.raises(InputError, match="an access port's"):
        choose_heartbeat_vid(sw, facts, {150}, 150, "w")
    full = DeviceFacts("sw1", "", "", (), {v: "" for v in range(100, 200)})
    with pytest.raises(InputError, match="no free VID"):
        choose_heartbeat_vid(sw, full, set(), None, "w")


def test_pair_switch_splits_the_trunks_and_up_refuses_on_the_standby():
    inv = parse_inventory(inv_text(), "inv.yaml")
    local = SwitchPlan("sw1", "br-of-sw1", "01", ("OpenFlow13",), (), sp_active().ports,
                       (TrunkPlan("GigabitEthernet0/1", "eth1", "system", (), (107, 108)),
                        TrunkPlan("GigabitEthernet0/2", "eth1", "system", (), ())))
    facts = DeviceFacts("sw1", "", "", (), {1: "default"})
    sp = pair_switch(local, inv, "a", facts, None, "w")
    assert [t.switch_port for t in sp.trunks] == ["GigabitEthernet0/1"] and sp.peer == "b"
    assert sp.peer_trunks[0].vids == (107, 108) and sp.heartbeat_vid == 199 and sp.heartbeat_mult == 3
    refuse_on_standby(Plan((sp,)), "inv.yaml")
    with pytest.raises(InputError, match="standby of sw1"):
        refuse_on_standby(Plan((peer_view(sp, "b"),)), "inv.yaml")


# ----------------------------------------------------------------------------- the decision
def sight(**kw) -> Sight:
    base = dict(role="standby", bfd=True, own_trunk_up=True, heard_ms=50, peer_dataplane=True, peer_role="active",
                armed=True, detect_ms=300)
    return Sight(**{**base, **kw})


@pytest.mark.parametrize("kw,action,words", [
    ({}, "stay", "alive on BFD and the management network"),
    ({"bfd": False}, "stay", "alive on the management network"),           # one path alone: a data-path blip
    ({"heard_ms": 900}, "stay", "alive on BFD"),                           # a management cut (issue #23)
    ({"heard_ms": None}, "stay", "alive on BFD"),
    ({"heard_ms": 900, "bfd": False}, "fence", "silent"),
    ({"peer_dataplane": False, "bfd": False}, "fence", "data path is down"),   # its OVS died, its agent says so
    ({"heard_ms": 900, "bfd": None}, "stay", "Open vSwitch is not running"),
    ({"heard_ms": 900, "bfd": False, "own_trunk_up": False}, "stay", "own trunk is down"),
    ({"heard_ms": 900, "bfd": False, "armed": False}, "stay", "not been seen healthy"),
    ({"peer_dataplane": False, "bfd": False, "peer_busy": "harmless down"}, "stay", "runs `harmless down`"),
    ({"role": "active", "bfd": False, "heard_ms": None}, "stay", "active"),    # only a standby takes over
    ({"role": "active", "peer_role": "active"}, "reread", "claims to be active too"),
    ({"role": "neither"}, "reread", "says neither"),
])
def test_a_standby_takes_over_only_when_both_paths_say_the_active_is_gone(kw, action, words):
    d = decide(sight(**kw))
    assert d.action == action and words in d.reason, d


# ----------------------------------------------------------------------------- the agents' messages
def test_messages_are_authenticated_and_accepted_once():
    k = wire.key("s" * 32)
    sender, guard = wire.Sender("a", "b", k), wire.Guard("b", "a", k)
    m, data = sender.seal("hb", {"roles": {"sw1": "active"}})
    assert guard.accept(data).body == {"roles": {"sw1": "active"}}
    assert guard.accept(data) is None                                      # a replay
    assert guard.accept(data[:-1] + bytes([data[-1] ^ 1])) is None         # a flipped bit
    assert wire.Guard("b", "a", wire.key("t" * 32)).accept(sender.seal("hb")[1]) is None   # another secret
    assert wire.Guard("c", "a", k).accept(sender.seal("hb")[1]) is None    # not for it
    old = wire.Sender("a", "b", k)
    stale = old.make("hb").model_copy(update={"t": time.time() - 3600})
    assert guard.accept(wire.seal(stale, k)) is None                       # a recording of an earlier run
    assert b"s" * 32 not in data


def test_a_request_gets_its_authentic_reply_and_a_forged_one_is_refused():
    k = wire.key("s" * 32)
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def serve(forge: bool):
        conn, _ = srv.accept()
        with conn:
            m = wire.Guard("b", "a", k).accept(wire.recv_frame(conn))
            key = wire.key("f" * 32) if forge else k
            wire.send_frame(conn, wire.Sender("b", "a", key).seal("reply", {"got": m.kind}, re=m.seq)[1])

    for forge in (False, True):
        t = threading.Thread(target=serve, args=(forge,))
        t.start()
        call = lambda: wire.request(("127.0.0.1", port), wire.Sender("a", "b", k), wire.Guard("a", "b", k),
                                    "replicate", {}, timeout=5)
        if forge:
            with pytest.raises(wire.WireError, match="not an authentic reply"):
                call()
        else:
            assert call() == {"got": "replicate"}
        t.join()
    srv.close()
    with pytest.raises(wire.WireError, match="no answer to replicate"):
        wire.request(("127.0.0.1", port), wire.Sender("a", "b", k), wire.Guard("a", "b", k), "replicate", {}, 1)


def test_the_monitor_stream_is_folded_into_rows():
    rows, pending = {}, []
    head = '"headings":["row","action","name","bfd_status","link_state"]'
    parse_monitor_line('{"data":[["u1","initial","hb-sw1",["map",[]],"up"]],' + head + '}', rows, pending)
    parse_monitor_line('{"data":[["u1","old",null,["map",[]],null],["","new","hb-sw1",["map",[["forwarding",'
                       '"true"],["state","up"]]],"up"]],' + head + '}', rows, pending)
    assert rows["u1"] == {"name": "hb-sw1", "bfd": {"forwarding": "true", "state": "up"}, "link": "up"}
    parse_monitor_line('{"data":[["u1","delete","hb-sw1",["map",[]],"up"]],' + head + '}', rows, pending)
    parse_monitor_line("not json", rows, pending)
    assert rows == {}


# ----------------------------------------------------------------------------- the heartbeat in OVS
def test_the_heartbeat_crosses_br_otc_tagged_with_its_vid():
    p = Plan((sp_active(),))
    table = FakeOFTable(name="br-otc").add_ofctl("\n".join(f.to_ofctl() for f in translator_flows(p)))
    hb = heartbeat_ofport(1)
    fate = table.fate(1900, vlan_vid=of.vid_present(199))
    assert fate.ports == [hb] and not fate.on(hb).get("vlans")              # popped: BFD sees it untagged
    back = table.fate(hb)
    assert back.ports == [1900] and back.on(1900)["vlans"] == ((0x8100, 199),)
    assert table.fate(1900, vlan_vid=of.vid_present(107)).ports == [1007]    # ports unchanged


def test_br_hb_runs_bfd_with_the_pair_timers_and_a_mac_per_server():
    cmds = [" ".join(c) for c in convergence_commands(Plan((sp_active(),)), {}, {}, {})]
    bfd = next(c for c in cmds if c.startswith("set Interface hb-sw1"))
    assert "bfd:enable=true" in bfd and "bfd:min_tx=100" in bfd and "bfd:min_rx=100" in bfd and "bfd:mult=3" in bfd
    assert "bfd:decay_min_rx=0" in bfd and f"bfd:bfd_local_src_mac={heartbeat_mac('a', 'sw1')}" in bfd
    assert "set Bridge br-hb datapath_type=netdev fail_mode=secure other_config:disable-in-band=true " \
           "external_ids:harmless=hb" in cmds
    assert heartbeat_mac("a", "sw1") != heartbeat_mac("b", "sw1") and heartbeat_mac("a", "sw1").startswith("02:")
    standby = [" ".join(c) for c in convergence_commands(Plan((peer_view(sp_active(), "b"),)), {}, {},
                                                         {"br-of-sw1": ["tcp:192.0.2.50:6653"]})]
    assert "del-controller br-of-sw1" in standby                               # a standby connects to nobody
    stale = convergence_commands(Plan((replace(sp_active(), heartbeat_vid=None),)),
                                 {"br-hb": {"external_ids": {"harmless": "hb"}}}, {}, {})
    assert ["--if-exists", "del-br", "br-hb"] in stale


def test_activation_creates_the_controllers_with_their_settings_in_one_transaction():
    cmds = activation_commands(sp_active(), [])
    assert cmds[0] == ["--id=@c0", "create", "Controller", 'target="tcp:192.0.2.50:6653"',
                       "connection_mode=out-of-band", "max_backoff=1000", "inactivity_probe=5000"]
    assert cmds[-1] == ["set", "Bridge", "br-of-sw1", "controller=[@c0]"]
    assert activation_commands(sp_active(), ["tcp:192.0.2.50:6653"]) == []
    assert activation_commands(peer_view(sp_active(), "b"), ["tcp:192.0.2.50:6653"]) == [
        ["del-controller", "br-of-sw1"]]


def test_loss_window_is_the_longest_gap_between_replies():
    replies = [(1, 10.00), (2, 10.01), (3, 10.02), (40, 10.52), (41, 10.53)]
    assert loss_window(replies, 10.0) == (490.0, 36, 10.52)
    assert loss_window([(1, 1.0)], 0)[0] == float("inf")


def test_a_take_over_runs_to_its_end_after_a_signal(tmp_path):
    """SIGINT/SIGTERM during a take-over are noted, never raised between its steps (stopping after the fencing
    commit and before the controllers would leave no server forwarding); up's steps still are."""
    from harmless import journal
    j = journal.Journal("failover", path=tmp_path / "journal.jsonl")
    journal._interrupt.set()
    try:
        for step in ("failover.begin", "fence.commit", "fence.committed", "roles.apply", "roles.applied",
                     "roles.save", "failover.end"):
            j.record(step)
        with pytest.raises(journal.Interrupted):
            j.record("server.build")
    finally:
        journal._interrupt.clear()
        j.close()


def test_ha_status_shows_roles_the_peer_and_the_last_failover(state_dir):
    from click.testing import CliRunner

    from harmless import cli
    from harmless.ha import record
    from harmless.ha.view import pair_view, peer_health
    assert pair_view() is None
    assert "no active/standby pair" in CliRunner().invoke(cli.main, ["ha", "status"]).output
    record.save(record.HaRecord(server="b", peer="a", roles={"sw1": "active"}, read_at=record.now_iso(),
                                last_failover=record.Failover(
                                    time=record.now_iso(), by="agent", switches=["sw1"], from_server="a",
                                    to_server="b", reason="the peer's agent is silent and BFD on the heartbeat VLAN "
                                    "is down", detect_ms=312.5, commit_ms=1400.0, activate_ms=4.0,
                                    controller_ms=80.0)))
    record.save_agent(record.AgentView(pid=os.getpid(), started=record.now_iso(), updated=record.now_iso(),
                                       peer_heard_ms=42.0, peer={"dataplane": {"sw1": False}},
                                       bfd={"sw1": True}, decisions={"sw1": "active"}))
    v = pair_view()
    assert v["roles"] == {"sw1": "active"} and v["bfd"] == {"sw1": "up"}
    assert v["peer_health"] == "alive, heard 42 ms ago, says its data path is down for sw1"
    r = CliRunner().invoke(cli.main, ["ha", "status"])
    assert r.exit_code == 0 and "a -> b (sw1)" in r.output and "fencing commit 1400.0 ms" in r.output
    assert json.loads(CliRunner().invoke(cli.main, ["ha", "status", "--json"]).output)["last_failover"]["to_server"] == "b"
    assert peer_health(None).startswith("no agent")
    stale = record.AgentView(pid=1, started="2020-01-01T00:00:00Z", updated="2020-01-01T00:00:00Z")
    assert "not running" in peer_health(stale)


IOS_SAVED = """hostname sw1
vtp mode transparent
vlan 100
 name users
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
interface FastEthernet0/8
 switchport access vlan 100
 switchport mode access
interface GigabitEthernet0/1
interface GigabitEthernet0/2
end
"""


@pytest.mark.parametrize("me,own,other", [("a", "GigabitEthernet0/1", "GigabitEthernet0/2"),
                                         ("b", "GigabitEthernet0/2", "GigabitEthernet0/1")])
def test_plan_of_a_pair_offline_puts_the_vlans_on_this_server_s_trunk(tmp_path, monkeypatch, state_dir, me, own,
                                                                     other):
    from harmless.offline import plan_offline
    monkeypatch.setenv("HARMLESS_HA_SERVER", me)
    monkeypatch.setenv("HL_TEST_PW", "x")
    cfg = tmp_path / "sw1.cfg"
    cfg.write_text(IOS_SAVED)
    inv = parse_inventory(inv_text(), "inv.yaml")
    res = plan_offline(inv, "inv.yaml", {"sw1": cfg})
    sp = res.plan.switches[0]
    assert [t.switch_port for t in sp.trunks] == [own] and [t.switch_port for t in sp.peer_trunks] == [other]
    assert {p.trunk for p in sp.ports} == {own} and sp.server == me and not sp.standby
    text = res.configs["sw1"]
    assert text.index(f"interface {other}") < text.index(f"interface {own}")       # the idle trunk first
    assert f"interface {own}\n switchport mode trunk\n switchport trunk allowed vlan 107,108,199" in text
    assert f"interface {other}\n switchport mode trunk\n switchport trunk allowed vlan 199" in text


def test_the_standby_keeps_where_the_copies_of_each_original_are(state_dir):
    """The copies' record travels with a replicated original (so a down on the standby removes them too); a config
    that does not match its SHA-256 is refused and nothing of it is kept."""
    from harmless import state as st
    from harmless.ha.replica import _store_originals
    text = "hostname sw1\nend\n"
    copies = [{"kind": "switch", "where": "sw1 flash:harmless-original.cfg"}]
    refs = _store_originals([{"switch": "sw1", "sha256": st.sha256(text), "text": text, "record": {}, "copies": copies}])
    assert st.copies_of("sw1", refs["sw1"]["file"]) == copies
    again = _store_originals([{"switch": "sw1", "sha256": st.sha256(text), "text": text, "record": {}, "copies": []}])
    assert again["sw1"]["file"] == refs["sw1"]["file"] and st.copies_of("sw1", refs["sw1"]["file"]) == []
    with pytest.raises(st.StateError):
        _store_originals([{"switch": "sw2", "sha256": st.sha256("x"), "text": "y", "record": {}}])
    assert st.active_original("sw2") is None
