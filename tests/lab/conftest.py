"""Lab fixtures: a whole lab (emulated IOS switch over SSH, its OVS data plane, hosts in namespaces, the HARMLESS
server side in its own namespace with the bundled os-ken controller), unique names, torn down even on failure."""
from __future__ import annotations

import importlib.util
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.demo import free_port, start_controller, stop_process
from harmless.inventory import load_inventory
from harmless.lab import topology as lab
from tests.conftest import require_root_ovs


@dataclass
class Lab:
    info: dict
    inventory: Path
    state_dir: Path

    @property
    def password(self) -> str:
        return Path(self.info["password_file"]).read_text().strip()

    def driver(self):
        inv = load_inventory(self.inventory)
        return orch.connect(inv.switches[0], "test")

    def running_config(self) -> str:
        d = self.driver()
        try:
            return d.running_config()
        finally:
            d.close()

    def lab_ovs(self):
        return lab.lab_ovs(self.info)


def make_lab(tmp_path_factory, hosts=(7, 8, 10), reject=(), ports=None, vendor="ios", controller_env=None):
    require_root_ovs()
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    state = tmp_path_factory.mktemp("state")
    old = os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(state)
    name = "t" + uuid.uuid4().hex[:5]
    ctl = None
    try:
        info = lab.lab_up(lab.LabSpec(name=name, ssh_port=free_port(), hosts=hosts, reject=reject,
                                      server_netns=f"hl-{name}-srv", vendor=vendor))
        ctl = start_controller(6653, state / "controller.log", netns=info["server_netns"], env=controller_env)
        inv = lab.inventory(info, ["tcp:127.0.0.1:6653"])
        if ports is not None:
            inv["switches"][0]["access_ports"] = [lab.access_iface(vendor, n) for n in ports]
        p = state / "inventory.yaml"
        p.write_text(yaml.safe_dump(inv, sort_keys=False))
        yield Lab(info, p, state)
    finally:
        try:
            if st.load():
                orch.down()
        except Exception as e:  # noqa: BLE001 - best effort cleanup, report
            print(f"cleanup: harmless down failed: {e}")
        stop_process(ctl)
        lab.lab_down(name)
        if old is None:
            os.environ.pop("HARMLESS_STATE_DIR", None)
        else:
            os.environ["HARMLESS_STATE_DIR"] = old


@pytest.fixture(scope="module")
def lab3(tmp_path_factory):
    """Three hosts on FastEthernet0/7, 0/8, 0/10, all migrated."""
    yield from make_lab(tmp_path_factory)


@pytest.fixture(scope="module")
def lab_reject(tmp_path_factory):
    """A device that rejects `switchport access vlan 110` (a line HARMLESS renders for port 10)."""
    yield from make_lab(tmp_path_factory, reject=(r"switchport access vlan 110",))


def lab_vendor_b() -> dict:
    """LabSpec arguments for the second switch of two-switch labs: another vendor (Arista EOS over eAPI)."""
    return {"vendor": "eos"}
