"""``harmless lab down`` removes the ``--server-netns`` namespace its ``lab up`` created, and only that one: not one
that existed before, not while another lab that is up still has its trunk there."""
from __future__ import annotations

import importlib.util
import subprocess
import uuid

import pytest

from harmless.lab import netns
from harmless.lab import topology as lab
from harmless.procs import free_port
from tests.conftest import require_root_ovs


@pytest.fixture
def names(state_dir):
    require_root_ovs()
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    tag = uuid.uuid4().hex[:4]
    made = {"labs": [f"n{tag}a", f"n{tag}b"], "srv": f"hlns-{tag}"}
    yield made
    for name in made["labs"]:
        lab.lab_down(name)
    subprocess.run(["ip", "netns", "del", made["srv"]], capture_output=True)


def _up(name: str, srv: str) -> dict:
    return lab.lab_up(lab.LabSpec(name=name, ssh_port=free_port(), hosts=(7,), server_netns=srv))


def _links(srv: str) -> str:
    return subprocess.run(["ip", "-n", srv, "-o", "link"], capture_output=True, text=True).stdout


def test_lab_down_removes_the_server_netns_it_created_only(names):
    a, b = names["labs"]
    srv = names["srv"]
    _up(a, srv)                                 # creates srv
    info_b = _up(b, srv)                        # finds it: shares it
    assert netns.exists(srv)
    lab.lab_down(a)                             # b is up and has its trunk there: b inherits the namespace
    assert netns.exists(srv) and info_b["trunk_interface"] in _links(srv)
    lab.lab_down(b)
    assert not netns.exists(srv)
    netns.add_ns(srv)                           # a namespace that existed before the lab is never removed
    _up(a, srv)
    assert lab.lab_down(a)
    assert netns.exists(srv) and lab.trunk_iface(a) not in _links(srv)
