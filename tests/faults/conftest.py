"""Fault-matrix fixtures: one emulated IOS switch with a realistic config (trunks with allowed-VLAN lists, a native
VLAN, descriptions, the archive feature so commits are commit-confirm), its data plane and hosts; HARMLESS itself runs
as a real CLI process (``python -m harmless.cli``) with its state directory on a small tmpfs (disk-full cases), and
is killed at journal steps through the test-only ``HARMLESS_FAULT_*`` hooks (:mod:`harmless.journal`)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from harmless import procs
from harmless.procs import free_port
from harmless.lab import topology as lab
from tests.conftest import require_root_ovs

#: ``HARMLESS_FAULTS=full``: every case of the matrix, the qualification run behind docs/faults.md's table (about 45
#: min on 2 vCPUs); without it the representative subset the suite (and CI) runs: SIGKILL at every journal step of
#: `up` and `down`, a catchable signal at the steps where the rollback differs most, one case of each other fault
FULL_MATRIX = os.environ.get("HARMLESS_FAULTS", "") == "full"


def matrix(full: list, subset: list) -> list:
    """A fault test's parametrization: ``full`` with ``HARMLESS_FAULTS=full``, else ``subset`` (cases of ``full``)."""
    missing = [c for c in subset if c not in full]
    assert not missing, f"subset cases not in the full matrix: {missing}"
    return full if FULL_MATRIX else subset


#: what real switch configs have, and what `down` must give back byte for byte
EXTRA_IOS = """\
vlan 200
 name voice
vlan 201
 name cameras
archive
 path flash:archive
interface GigabitEthernet0/1
 description uplink to the HARMLESS server
 switchport trunk native vlan 101
 switchport trunk allowed vlan 1,100,101
 switchport mode trunk
interface GigabitEthernet0/2
 description uplink to core-sw2 Gi1/0/48
 switchport trunk native vlan 101
 switchport trunk allowed vlan 100,101,200,201
 switchport mode trunk
interface FastEthernet0/20
 description printer room 2.14
 switchport access vlan 101
 switchport mode access
"""


@dataclass
class FaultLab:
    """The lab, the HARMLESS state dir (tmpfs) and how to run the real CLI against it."""

    info: dict
    inventory: Path
    state: Path
    original: str = ""
    log: list = field(default_factory=list)

    def env(self, **extra) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HARMLESS_FAULT")}
        env["HARMLESS_STATE_DIR"] = str(self.state)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def cli(self, *args: str, timeout: float = 240, **fault) -> subprocess.CompletedProcess:
        """Run ``harmless ARGS`` as its own process (no stdin), with optional ``HARMLESS_FAULT_*`` variables."""
        env = self.env(**{f"HARMLESS_FAULT_{k.upper()}": v for k, v in fault.items()})
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-m", "harmless.cli", *args], env=env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        self.log.append((args, fault, p.returncode, round(time.monotonic() - t0, 1)))
        return p

    def cli_unread(self, *args: str, timeout: float = 240) -> int:
        """Run ``harmless ARGS`` whose stdout and stderr nobody reads: both pipes are closed before it writes
        (``harmless up | true`` with stderr too); returns its exit code."""
        p = subprocess.Popen([sys.executable, "-m", "harmless.cli", *args], env=self.env(), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.close()
        p.stderr.close()
        rc = p.wait(timeout)
        self.log.append((args, {"output": "closed"}, rc, 0.0))
        return rc

    def device(self, *commands: str) -> list[str]:
        """Type ``commands`` on the emulated switch as an operator would (IOS: exec commands over SSH, each answer
        read as it comes, so prompts like ``[confirm]`` can be answered; EOS: one eAPI request, text output)."""
        from harmless import deployment
        from harmless.inventory import load_inventory
        d = deployment.connect(load_inventory(self.inventory).switches[0], "test")
        try:
            dev = d._dev().device
            if self.info.get("vendor", "ios") == "eos" or not hasattr(dev, "send_command_timing"):
                return [r.get("output", "") for r in dev.run_commands(["enable", *commands], encoding="text")[1:]]
            out = []
            for c in commands:
                try:
                    out.append(dev.send_command_timing(c, read_timeout=10))
                except Exception as e:  # noqa: BLE001 - a reload ends the session, as on the real switch
                    out.append(f"(session ended: {type(e).__name__})")
                    break
            return out
        finally:
            d.close()

    def configure(self, *lines: str) -> None:
        """Change the switch's running config by hand (IOS: ``configure terminal`` over SSH; EOS: eAPI)."""
        if self.info.get("vendor", "ios") == "eos":
            self.device("configure", *lines, "end")
            return
        from harmless import deployment
        from harmless.inventory import load_inventory
        d = deployment.connect(load_inventory(self.inventory).switches[0], "test")
        try:
            out = d._dev().device.send_config_set(list(lines))
            assert "Invalid" not in out, out
        finally:
            d.close()

    def running_config(self) -> str:
        from harmless import deployment
        from harmless.inventory import load_inventory
        d = deployment.connect(load_inventory(self.inventory).switches[0], "test")
        try:
            return d.running_config()
        finally:
            d.close()

    def switch_copies(self) -> list[str]:
        """The copy files of the original HARMLESS keeps on the switch's flash (issue #23) that exist now."""
        from harmless import deployment, originals
        from harmless.inventory import load_inventory
        d = deployment.connect(load_inventory(self.inventory).switches[0], "test")
        try:
            return [n for n in (originals.ORIGINAL, originals.MANIFEST) if d.read_file(n) is not None]
        finally:
            d.close()

    def server_dies(self) -> None:
        """The server is gone: its private OVS daemons killed, every file of its state directory deleted (the
        directory itself, a tmpfs mount point, stays as the fresh machine's empty state directory)."""
        for pidf in (self.state / "ovs").rglob("*.pid"):
            try:
                os.kill(int(pidf.read_text().strip()), signal.SIGKILL)
            except (ValueError, OSError):
                pass
        for child in self.state.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        for tap in self.server_bridges():          # the killed userspace datapath's tap devices: the dead box's
            subprocess.run(["ip", "-n", self.info["server_netns"], "link", "del", tap], capture_output=True)

    def set_faults(self, **faults) -> None:
        """Runtime faults of the emulated switch (``reject``/``drop``/``slow``; none = clear)."""
        p = Path(self.info["fault_file"])
        if faults:
            p.write_text(json.dumps(faults))
        elif p.exists():
            p.unlink()

    def journal(self) -> list[dict]:
        p = self.state / "journal.jsonl"
        return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []

    def private_ovs_alive(self) -> list[str]:
        """Pids of HARMLESS's private OVS daemons that are still alive."""
        alive = []
        for pidf in (self.state / "ovs").rglob("*.pid"):
            try:
                pid = int(pidf.read_text().strip())
                if procs.alive(pid):
                    alive.append(f"{pidf.name}:{pid}")
            except (ValueError, OSError):
                pass
        return alive

    def server_bridges(self) -> list[str]:
        out = subprocess.run(["ip", "-n", self.info["server_netns"], "-o", "link"], capture_output=True,
                             text=True).stdout
        return [w for w in ("br-otc", "br-of-sw1") if f" {w}:" in out or f" {w}@" in out]


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], check=True)


EXTRA_EOS = """\
vlan 200
   name voice
interface Ethernet20
   description printer room 2.14
   switchport access vlan 101
interface Ethernet24
   description uplink to core-sw2 Et48
   switchport mode trunk
   switchport trunk native vlan 101
   switchport trunk allowed vlan 100,101,200
"""


def _fault_lab(tmp_path_factory, vendor: str, extra: str, must_have: str):
    require_root_ovs()
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    name = vendor[0] + uuid.uuid4().hex[:5]
    base = tmp_path_factory.mktemp("faults")
    labdir, state = base / "lab", base / "state"
    old = os.environ.get("HARMLESS_STATE_DIR")
    mounted = False

    def env_state(d):
        os.environ["HARMLESS_STATE_DIR"] = str(d)

    env_state(labdir)
    try:
        info = lab.lab_up(lab.LabSpec(name=name, ssh_port=free_port(), hosts=(7, 8, 10), vendor=vendor,
                                      server_netns=f"hl-{name}-srv", extra_config=extra))
        _mount_tmpfs(state, "48m")
        mounted = True
        inv = lab.inventory(info, [])
        inv["switches"][0]["access_ports"] = [lab.access_iface(vendor, n) for n in (7, 8, 10)]
        # a lost SSH session is noticed only when a command's wait runs out: 20 s (> the 12 s "slow switch" case)
        inv["switches"][0]["command_timeout_s"] = 20
        if vendor == "ios":       # EXTRA_IOS makes the HARMLESS trunk a trunk already ("uplink to the HARMLESS server",
            inv["switches"][0]["trunks"][0]["shared"] = True   # VLANs 1,100,101): shared with the server on purpose
        p = base / "inventory.yaml"
        p.write_text(yaml.safe_dump(inv, sort_keys=False))
        fl = FaultLab(info, p, state)
        fl.original = fl.running_config()
        assert must_have in fl.original, fl.original
        yield fl
    finally:
        env = {**os.environ, "HARMLESS_STATE_DIR": str(state)}
        if mounted:
            subprocess.run([sys.executable, "-m", "harmless.cli", "down"], env=env, capture_output=True, timeout=300)
            for pidf in (state / "ovs").rglob("*.pid"):
                try:
                    os.kill(int(pidf.read_text().strip()), signal.SIGKILL)
                except (ValueError, OSError):
                    pass
        env_state(labdir)
        lab.lab_down(name)
        subprocess.run(["ip", "netns", "del", f"hl-{name}-srv"], capture_output=True)
        if old is None:
            os.environ.pop("HARMLESS_STATE_DIR", None)
        else:
            os.environ["HARMLESS_STATE_DIR"] = old
        if mounted:
            subprocess.run(["umount", "-l", str(state)], capture_output=True)


@pytest.fixture(scope="module")
def flab(tmp_path_factory):
    """The emulated IOS switch (2960) with EXTRA_IOS."""
    yield from _fault_lab(tmp_path_factory, "ios", EXTRA_IOS, "switchport trunk allowed vlan 100,101,200,201")


@pytest.fixture(scope="module")
def flab_eos(tmp_path_factory):
    """The emulated Arista EOS switch (eAPI) with EXTRA_EOS."""
    yield from _fault_lab(tmp_path_factory, "eos", EXTRA_EOS, "switchport trunk allowed vlan 100-101,200")
