"""Operations on the lab (issue #16): ``harmless exporter`` scraped over HTTP during a deployment, and
``harmless restore`` after an ovs-vswitchd restart.

One lab for the module (two hosts on FastEthernet0/7 and 0/8, the bundled learning switch):

* the exporter's br-of counters rise with the pings sent through the hairpin, translator flows present equal the
  expected ones, the controller is connected, the last ``up`` succeeded;
* pulling host 7's cable (its veth in the switch's namespace) turns the device-side link metric to 0 (the
  exporter's device poll), and once ``harmless watch --once`` mirrored it the br-of side is 0 and the port is held;
  plugging it back turns both to 1 again;
* ovs-vswitchd stopped and br-of-sw1 deleted from OVSDB, pings fail; ``harmless restore`` (the command the
  harmless-restore unit runs) starts ovs-vswitchd, rebuilds br-of-sw1 and the translator flows, never contacts the
  switch (its running config is unchanged), and pings pass again. Then only the server side is removed (the lab
  is deleted right after).
"""
from __future__ import annotations

import subprocess
import threading
import urllib.request

import pytest

from tests.conftest import wait_for
from prometheus_client.parser import text_string_to_metric_families

from harmless import exporter, linkwatch
from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.procs import free_port
from harmless.lab import topology as lab
from harmless.otc import bridges
from harmless.restore import restore
from tests.lab.conftest import make_lab

pytestmark = [pytest.mark.root, pytest.mark.lab]


@pytest.fixture(scope="module")
def lab2(tmp_path_factory):
    yield from make_lab(tmp_path_factory, hosts=(7, 8))



def scrape(port: int) -> dict[tuple, float]:
    """``{(sample name, sorted labels...): value}`` of one scrape."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=20).read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, *sorted(s.labels.items()))] = s.value
    return out


def sample(m: dict, name: str, **labels) -> float | None:
    return m.get((name, *sorted(labels.items())))


def port_metric(m, name, ofport, **labels):
    return sample(m, name, switch="sw1", interface=f"FastEthernet0/{ofport}", ofport=str(ofport), **labels)


def test_exporter_counters_rise_with_traffic_and_link_state_follows_a_pulled_cable(lab2):
    L = lab2
    orch.up(str(L.inventory))
    port = free_port()
    stop = threading.Event()             # `harmless exporter --listen 127.0.0.1:PORT --device-interval 1`, in-process
    exp = threading.Thread(target=exporter.serve, args=(("127.0.0.1", port), 1.0, stop), daemon=True)
    exp.start()
    veth7 = L.info["port_map"]["FastEthernet0/7"]
    errors: list[str] = []
    try:
        m = wait_for(lambda: _try_scrape(port, exp), 30, "the exporter's first scrape with a device poll")
        assert sample(m, "harmless_deployed") == 1
        assert sample(m, "harmless_translator_flows", switch="sw1") == \
            sample(m, "harmless_translator_flows_expected", switch="sw1") == 4
        assert sample(m, "harmless_last_run_success", switch="sw1", op="up") == 1
        assert sample(m, "harmless_journal_unfinished", switch="sw1") == 0
        wait_for(lambda: sample(scrape(port), "harmless_controller_connected", switch="sw1", bridge="br-of-sw1",
                                target="tcp:127.0.0.1:6653") == 1, 20, "the controller connected")
        for p in (7, 8):
            assert port_metric(m, "harmless_port_link_up", p, source="device") == 1
            assert port_metric(m, "harmless_port_link_up", p, source="br_of") == 1
            assert port_metric(m, "harmless_port_blocked_by_watch", p) == 0
        assert wait_for(lambda: lab.ping(L.info, 7, 8, count=1) == 0.0, 20, "traffic through the hairpin")
        before = scrape(port)
        assert lab.ping(L.info, 7, 8, count=5) == 0.0

        def risen():     # OVS adds datapath-flow hits to patch-port counters when its revalidators run (~0.5 s)
            x = scrape(port)
            r = [port_metric(y, "harmless_port_packets_total", p, side="br_of", direction=d)
                 for y in (before, x) for p, d in ((7, "rx"), (8, "tx"))]
            return x if r[2] - r[0] >= 5 and r[3] - r[1] >= 5 else None
        after = wait_for(risen, 15, "br-of counters of ports 7 (rx) and 8 (tx) to count the 5 echo requests")
        rx7 = [port_metric(x, "harmless_port_packets_total", 7, side="br_of", direction="rx") for x in (before, after)]
        tx8 = [port_metric(x, "harmless_port_packets_total", 8, side="br_of", direction="tx") for x in (before, after)]
        by7 = [port_metric(x, "harmless_port_bytes_total", 7, side="br_of", direction="rx") for x in (before, after)]
        device = [k for k in after if k[0] == "harmless_port_packets_total" and ("side", "device") in k]
        print(f"\nbr-of port 7 rx packets {rx7}, port 8 tx packets {tx8}, port 7 rx bytes {by7}; device-side "
              f"packet counters: {len(device)} (the emulated IOS reports none)")
        assert rx7[1] - rx7[0] >= 5 and tx8[1] - tx8[0] >= 5      # 5 echo requests in, out to host 8
        assert by7[1] - by7[0] >= 5 * 98                             # 98-byte ICMP echo frames
        # pull host 7's cable: the device side goes down at the exporter's next device poll
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth7, "down"], check=True)
        def device7(want):
            x = scrape(port)
            return x if port_metric(x, "harmless_port_link_up", 7, source="device") == want else None
        m = wait_for(lambda: device7(0), 20, "the device-side link of port 7 at 0")
        assert port_metric(m, "harmless_port_link_up", 8, source="device") == 1
        linkwatch.watch(once=True, on_error=errors.append)          # what `harmless watch --once` runs
        m = scrape(port)
        assert port_metric(m, "harmless_port_link_up", 7, source="br_of") == 0
        assert port_metric(m, "harmless_port_blocked_by_watch", 7) == 1
        assert port_metric(m, "harmless_port_link_up", 8, source="br_of") == 1
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth7, "up"], check=True)
        wait_for(lambda: device7(1), 20, "the device-side link of port 7 back at 1")
        linkwatch.watch(once=True, on_error=errors.append)          # what `harmless watch --once` runs
        m = scrape(port)
        assert (port_metric(m, "harmless_port_link_up", 7, source="br_of"),
                port_metric(m, "harmless_port_blocked_by_watch", 7)) == (1, 0)
        assert sample(m, "harmless_exporter_scrape_errors", part="ovs") == 0
        assert errors == []
    finally:
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth7, "up"], check=False)
        stop.set()
        exp.join(15)


def _try_scrape(port, thread):
    if not thread.is_alive():
        raise AssertionError("the exporter stopped")
    try:
        m = scrape(port)
    except OSError:
        return None
    return m if sample(m, "harmless_device_poll_success", switch="sw1") == 1 else None


def test_restore_rebuilds_the_server_after_an_ovs_vswitchd_restart(lab2):
    L = lab2
    s = st.load()
    if not s:
        orch.up(str(L.inventory))
        s = st.load()
    config_before = L.running_config()
    assert wait_for(lambda: lab.ping(L.info, 7, 8, count=1) == 0.0, 20, "traffic before the restart")
    ovs = deployment.state_ovs(s)
    ovs.stop_vswitchd(cleanup=False)                      # ovs-vswitchd goes away (crash, upgrade, reboot) ...
    ovs.vsctl("--if-exists", "del-br", "br-of-sw1", wait=False)   # ... and br-of-sw1 is lost from OVSDB
    assert lab.ping(L.info, 7, 8, count=1) == 100.0
    lines: list[str] = []
    res = restore(lines.append)                           # what `harmless restore` (the unit's command) runs
    print("\n" + "\n".join(lines))
    sw = res.switches["sw1"]
    assert res.restored and res.ovs.started == ["ovs-vswitchd"]
    assert (sw.bridge_was_present, sw.translator_flows_before) == (False, 0)
    assert sw.translator_flows == sw.translator_flows_expected == 4
    assert all(line.startswith("sw1: ") for line in lines) and len(lines) == 3    # the unit's journal lines
    assert "br-of-sw1" in ovs.vsctl("list-br").split()
    desc = ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1")
    assert " 7(sw1-p7):" in desc and " 8(sw1-p8):" in desc      # the legacy port numbers again
    assert wait_for(lambda: lab.ping(L.info, 7, 8, count=1) == 0.0, 30, "traffic after restore")
    assert lab.ping(L.info, 8, 7, count=2) == 0.0
    assert L.running_config() == config_before               # the switch was not touched
    # The lab (switch included) is deleted next: remove only the server side. A `harmless down` would spend ~14 s
    # restoring the config of a switch that is thrown away right after (the lab tests prove down elsewhere).
    bridges.remove(ovs, ["br-of-sw1"])
    ovs.stop()
    st.clear()
