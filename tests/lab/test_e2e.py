"""Lab end-to-end: inventory -> NAPALM (emulated IOS over SSH) -> OVS -> traffic -> down -> config equals original."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.cli import main
from harmless.errors import OvsError
from harmless.lab import topology as lab
from harmless.otc import bridges, flows
from tests.conftest import wait_for

pytestmark = pytest.mark.lab


def wait(cond, timeout=20.0, what="condition"):
    wait_for(cond, timeout, what, 0.3)


def all_pairs_loss(info, count=3):
    ports = sorted(int(h) for h in info["hosts"])
    return {(a, b): lab.ping(info, a, b, count=count) for a in ports for b in ports if a != b}


def test_up_hairpins_all_traffic_and_down_restores_the_exact_config(lab3, capsys):
    info = lab3.info
    original = lab3.running_config()
    # before: one VLAN, the legacy switch forwards directly
    assert lab.ping(info, 7, 10, count=2) == 0.0

    # plan changes nothing and prints JSON
    r = CliRunner().invoke(main, ["plan", "-i", str(lab3.inventory), "--json"])
    assert r.exit_code == 0, r.stderr
    planned = json.loads(r.stdout.strip().splitlines()[-1])
    ports = {p["interface"]: p for p in planned["plan"]["switches"][0]["ports"]}
    assert ports["FastEthernet0/7"]["ofport"] == 7 and ports["FastEthernet0/7"]["vid"] == 107
    assert 100 not in [p["vid"] for p in ports.values()] and 101 not in [p["vid"] for p in ports.values()]
    assert "+ switchport trunk allowed vlan 107,108,110" in planned["diffs"]["sw1"]
    assert lab3.running_config() == original and st.load() is None

    res = orch.up(str(lab3.inventory))
    assert res.changed == {"sw1": True}
    assert res.commit_confirm == {"sw1": False}     # the lab's IOS has no archive: a plain commit, and it says so
    facts = lab3.driver().facts()
    assert {107, 108, 110} <= set(facts.vlans)
    assert facts.ports["FastEthernet0/10"].access_vid == 110
    assert facts.ports["GigabitEthernet0/1"].mode == "trunk"
    assert facts.ports["GigabitEthernet0/1"].allowed_vids == (107, 108, 110)
    # the emulated switch's data plane follows its new config
    lovs = lab3.lab_ovs()
    wait(lambda: lovs.vsctl("get", "Port", "fa0-10", "tag").strip() == "110", what="lab data plane VID 110")

    s = deployment.state_ovs(st.load())
    wait(lambda: all(c["is_connected"] for c in orch.status(with_device=False).switches[0].controllers),
         what="controller connection")
    hair0 = bridges.otc_hairpinned_packets(s)
    loss = all_pairs_loss(info)
    assert all(v == 0.0 for v in loss.values()), loss
    # every packet went through the server: 6 pairs x 3 echo requests and replies, plus ARP
    assert bridges.otc_hairpinned_packets(s) - hair0 >= 36
    st_ = orch.status(with_device=True)
    sw = st_.switches[0]
    assert all(p.rx_packets > 0 and p.tx_packets > 0 for p in sw.ports), sw.ports
    assert all(p.device_link == "up" for p in sw.ports), sw.ports
    assert sw.controllers[0]["is_connected"] and sw.trunks[info["trunk_interface"]]["rx_packets"] > 0

    # trace: legacy port 7 -> host on port 10 takes trunk(VID 107) -> br-of 7 -> br-of 10 -> trunk(VID 110)
    out = s.appctl("ofproto/trace", "br-otc", f"in_port={flows.trunk_ofport(1, 0)},dl_vlan=107,"
                   f"dl_src={lab.host_mac(7)},dl_dst={lab.host_mac(10)},dl_type=0x0800,"
                   f"nw_src={lab.host_ip(7)},nw_dst={lab.host_ip(10)}")
    assert 'bridge("br-of-sw1")' in out and "output:10" in out
    assert out.split("Datapath actions:")[1].strip().startswith("pop_vlan,push_vlan(vid=110,pcp=0)")

    # up again: empty diff, the device is not touched
    after_up = lab3.running_config()
    res = orch.up(str(lab3.inventory))
    assert res.changed == {"sw1": False} and res.diffs["sw1"] == ""
    assert lab3.running_config() == after_up

    # ovs-vswitchd restart: flows are gone; up repairs without touching the switch
    s.stop_vswitchd(cleanup=False)
    s.start()
    assert lab.ping(info, 7, 10, count=2) == 100.0
    res = orch.up(str(lab3.inventory))
    assert res.changed == {"sw1": False}
    assert lab3.running_config() == after_up
    wait(lambda: lab.ping(info, 7, 10, count=1) == 0.0, what="ping after repair")

    # down: exact original config, bridges gone, direct forwarding again
    r = orch.down()
    assert r.config_restored is True
    assert lab3.running_config() == original
    assert st.load() is None
    wait(lambda: lovs.vsctl("get", "Port", "fa0-10", "tag").strip() == "100", what="lab back in VLAN 100")
    assert lab.ping(info, 7, 10, count=2) == 0.0

    # the switch password never appears in output, state or logs
    pw = lab3.password
    captured = capsys.readouterr()
    assert pw not in captured.out + captured.err
    for f in Path(lab3.state_dir).rglob("*"):
        if f.is_file() and f.name != "password":
            assert pw not in f.read_text(errors="replace"), f


def test_rejected_line_leaves_device_original_and_no_bridges(lab_reject):
    original = lab_reject.running_config()
    r = CliRunner().invoke(main, ["up", "-i", str(lab_reject.inventory)])
    assert r.exit_code == 1
    err = r.stderr.strip().splitlines()[-1]
    assert err.startswith("error: ") and "switchport access vlan 110" in err and "Traceback" not in r.stderr
    assert lab_reject.running_config() == original
    assert st.load() is None
    srv = lab_reject.info["server_netns"]
    import subprocess
    links = subprocess.run(["ip", "-n", srv, "link"], capture_output=True, text=True).stdout
    assert "br-otc" not in links and "br-of-sw1" not in links


def test_server_failure_rolls_the_switch_back(lab_reject, monkeypatch):
    # migrate only ports 7 and 8 (the device accepts those lines), then fail server verification
    import yaml
    inv = yaml.safe_load(lab_reject.inventory.read_text())
    inv["switches"][0]["access_ports"] = ["FastEthernet0/7", "FastEthernet0/8"]
    p = lab_reject.inventory.with_name("inv78.yaml")
    p.write_text(yaml.safe_dump(inv))
    original = lab_reject.running_config()
    monkeypatch.setattr(bridges, "verify", lambda ovs, plan: ["injected verification failure"])
    with pytest.raises(OvsError, match="injected verification failure.*rolled back"):
        orch.up(str(p))
    assert lab_reject.running_config() == original
    assert st.load() is None
    o = deployment.server_ovs(orch.load_inventory(p), start=False)
    assert not o.vswitchd_running() or "br-otc" not in o.vsctl("list-br")
