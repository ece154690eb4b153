"""Lab fixtures: a whole lab (emulated IOS switch over SSH, its OVS data plane, hosts in namespaces, the HARMLESS
server side in its own namespace with the bundled os-ken controller), unique names, torn down even on failure."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab.controller import start_controller
from harmless.procs import free_port, stop as stop_process
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
        return deployment.connect(inv.switches[0], "test")

    def running_config(self) -> str:
        d = self.driver()
        try:
            return d.running_config()
        finally:
            d.close()

    def lab_ovs(self):
        return lab.lab_ovs(self.info)


@contextmanager
def state_dir(tmp_path_factory) -> Iterator[Path]:
    """A fresh HARMLESS state dir as ``HARMLESS_STATE_DIR`` for the block; the old value is back afterwards."""
    state = tmp_path_factory.mktemp("state")
    old = os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(state)
    try:
        yield state
    finally:
        if old is None:
            os.environ.pop("HARMLESS_STATE_DIR", None)
        else:
            os.environ["HARMLESS_STATE_DIR"] = old


def quiet_session(pid: int, port: int, quiet_s: float = 1.5) -> bool:
    """True if process ``pid`` holds a TCP session to 127.0.0.1:``port`` that has carried nothing either way for
    ``quiet_s`` s (``ss -i``: lastsnd/lastrcv in ms). ``harmless watch`` keeps its switch session open between
    polls and prints nothing when nothing changes: an open, quiet session is how its first poll shows it ended."""
    out = subprocess.run(["ss", "-Htnpi", "state", "established", f"( dport = :{port} )"], capture_output=True,
                         text=True).stdout.splitlines()
    for sock, info in zip(out, out[1:]):
        if f"pid={pid}," in sock:
            ms = {k: int(v) for k, v in re.findall(r"\b(lastsnd|lastrcv):(\d+)", info)}
            return len(ms) == 2 and min(ms.values()) >= quiet_s * 1000
    return False


def down_if_deployed() -> None:
    """Best-effort ``harmless down`` of whatever the current state dir holds (cleanup; failures are printed)."""
    try:
        if st.load():
            orch.down()
    except Exception as e:  # noqa: BLE001 - best effort cleanup, report
        print(f"cleanup: harmless down failed: {e}")


def make_lab(tmp_path_factory, hosts=(7, 8, 10), reject=(), ports=None, vendor="ios", controller_env=None,
             controller="bundled", **spec):
    """A lab (module fixture body; yields a :class:`Lab`); ``spec``: further :class:`~harmless.lab.topology.LabSpec`
    fields.

    ``controller``: ``"bundled"`` starts the bundled learning switch on tcp:127.0.0.1:6653 in the server namespace;
    a callable ``(state dir, lab info) -> Popen`` starts your own instead (its inventory target stays
    tcp:127.0.0.1:6653 unless the test rewrites it; the process is stopped afterwards); None starts none.
    """
    require_root_ovs()
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    name = "t" + uuid.uuid4().hex[:5]
    with state_dir(tmp_path_factory) as state:
        ctl = None
        try:
            info = lab.lab_up(lab.LabSpec(name=name, ssh_port=free_port(), hosts=hosts, reject=reject,
                                          server_netns=f"hl-{name}-srv", vendor=vendor, **spec))
            if controller == "bundled":
                ctl = start_controller(6653, state / "controller.log", netns=info["server_netns"],
                                       env=controller_env)
            elif controller is not None:
                ctl = controller(state, info)
            inv = lab.inventory(info, ["tcp:127.0.0.1:6653"])
            if ports is not None:
                inv["switches"][0]["access_ports"] = [lab.access_iface(vendor, n) for n in ports]
            p = state / "inventory.yaml"
            p.write_text(yaml.safe_dump(inv, sort_keys=False))
            yield Lab(info, p, state)
        finally:
            down_if_deployed()
            stop_process(ctl)
            lab.lab_down(name)


def make_labs(tmp_path_factory, tag: str, specs: Callable[[str, str], Iterable[lab.LabSpec]],
              switches: Callable[[list[dict]], list[dict]], filename: str) -> Iterator[dict]:
    """Several lab switches around one HARMLESS server namespace and one controller (module fixtures).

    Args:
        tag: one letter, the start of every name (unique per test module).
        specs: ``(prefix, server netns) -> LabSpecs``, brought up in order (a generator, so each spec's
            ``free_port()`` is taken after the previous lab listens); ``prefix`` is ``tag`` + 4 random hex
            digits, to start every lab name with; every spec must use the given ``server_netns``.
        switches: ``[lab info] -> [inventory switch dict]`` (names, datapath ids, access ports).
        filename: inventory file name in the state dir.

    Yields:
        ``{"inventory": Path, "infos": [lab info], "state": Path}``. Afterwards (also on failure): ``harmless
        down`` if deployed, controller stopped, every lab and the server namespace removed, state dir env reset.
    """
    require_root_ovs()
    prefix = f"{tag}{uuid.uuid4().hex[:4]}"
    srv = f"hl-{prefix}-srv"
    with state_dir(tmp_path_factory) as state:
        names, infos, ctl = [], [], None
        try:
            for spec in specs(prefix, srv):
                names.append(spec.name)
                infos.append(lab.lab_up(spec))
            ctl = start_controller(6653, state / "controller.log", netns=srv)
            inv = {"server": {"datapath": "netdev", "ovs": "private", "netns": srv}, "switches": switches(infos)}
            p = state / filename
            p.write_text(yaml.safe_dump(inv, sort_keys=False))
            yield {"inventory": p, "infos": infos, "state": state}
        finally:
            down_if_deployed()
            stop_process(ctl)
            for name in names:
                lab.lab_down(name)
            subprocess.run(["ip", "netns", "del", srv], capture_output=True)


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
