"""The shipped example inventory is valid and describes the default lab exactly."""
from pathlib import Path

import yaml

from harmless.inventory import load_inventory, parse_inventory
from harmless.lab import topology as lab

ROOT = Path(__file__).resolve().parents[2]


def test_examples_lab_yaml_matches_the_default_lab(monkeypatch):
    monkeypatch.setenv("HARMLESS_STATE_DIR", "/var/lib/harmless")
    ex = load_inventory(ROOT / "examples" / "lab.yaml")
    spec = lab.LabSpec()
    info = {"ssh_port": spec.ssh_port, "username": "admin",
            "password_file": str(Path("/var/lib/harmless") / "labs" / spec.name / "password"),
            "trunk_port": spec.trunk, "trunk_interface": lab.trunk_iface(spec.name),
            "hosts": {str(n): {"interface": f"FastEthernet0/{n}"} for n in spec.hosts}}
    generated = parse_inventory(yaml.safe_dump(lab.inventory(info, ["tcp:127.0.0.1:6653"])))
    assert ex == generated
