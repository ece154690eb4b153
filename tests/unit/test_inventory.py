"""Inventory validation: every malformed input gives one InputError naming file, field and fix."""
import os

import pytest
import yaml

from harmless.errors import InputError
from harmless.inventory import load_inventory, parse_inventory, port_index

GOOD = {
    "server": {"datapath": "netdev"},
    "switches": [{
        "name": "sw1", "driver": "ios", "host": "192.0.2.10", "port": 22, "username": "admin",
        "password_env": "HL_TEST_PW",
        "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1"}],
        "access_ports": ["FastEthernet0/7", {"interface": "FastEthernet0/10", "vid": 110}],
        "vlan_range": "100-199",
        "openflow": {"versions": ["OpenFlow13"], "controllers": ["tcp:127.0.0.1:6653"]},
    }],
}


def mutate(path, value, delete=False):
    d = yaml.safe_load(yaml.safe_dump(GOOD))
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return yaml.safe_dump(d)


def test_good_inventory_parses_with_defaults():
    inv = parse_inventory(yaml.safe_dump(GOOD), "inv.yaml")
    sw = inv.switches[0]
    assert [p.interface for p in sw.access_ports] == ["FastEthernet0/7", "FastEthernet0/10"]
    assert sw.access_ports[1].vid == 110
    assert sw.bridge == "br-of-sw1"
    assert sw.trunks[0].type == "system"
    assert inv.server.ovs == "auto"
    assert len(sw.dpid) == 16 and sw.dpid == parse_inventory(yaml.safe_dump(GOOD)).switches[0].dpid  # stable


@pytest.mark.parametrize("path,value,delete,field,words", [
    (("switches", 0, "host"), None, True, "switches[0].host", "Field required"),
    (("switches", 0, "access_ports"), ["FastEthernet0/7", "FastEthernet0/7"], False, "switches[0].access_ports[1]",
     "duplicate port"),
    (("switches", 0, "access_ports"), ["GigabitEthernet0/1"], False, "switches[0].access_ports[0]", "trunk port"),
    (("switches", 0, "access_ports"), [{"interface": "Fa0/7", "vid": 5000}], False,
     "switches[0].access_ports[0].vid", "outside 1-4094"),
    (("switches", 0, "access_ports"), [{"interface": "Fa0/7", "vid": 300}], False,
     "switches[0].access_ports[0].vid", "outside vlan_range"),
    (("switches", 0, "vlan_range"), "0-5000", False, "switches[0].vlan_range", "outside 1-4094"),
    (("switches", 0, "vlan_range"), "abc", False, "switches[0].vlan_range", "not a VID range"),
    (("switches", 0, "driver"), "nosuchos", False, "switches[0].driver", "unknown driver"),
    (("switches", 0, "password"), "hunter2", False, "switches[0].password", "may not be written"),
    (("switches", 0, "password_env"), None, True, "switches[0].password_env", "exactly one"),
    (("switches", 0, "openflow"), {"versions": ["OpenFlow99"]}, False, "switches[0].openflow.versions",
     "unknown OpenFlow version"),
    (("switches", 0, "openflow"), {"controllers": ["http://x"]}, False, "switches[0].openflow.controllers",
     "not tcp:IP:PORT"),
    (("switches", 0, "name"), "Bad_Name!", False, "switches[0].name", "lowercase"),
    (("switches", 0, "datapath_id"), "0x0", False, "switches[0].datapath_id", "non-zero"),
    (("switches", 0, "colour"), "blue", False, "switches[0].colour", "Extra inputs"),
    (("switches", 0, "trunks"), [{"switch_port": "Gi0/1", "server_interface": "x", "type": "dpdk"}], False,
     "switches[0].trunks[0].devargs", "needs devargs"),
])
def test_bad_inventory_names_file_field_and_fix(path, value, delete, field, words):
    with pytest.raises(InputError) as e:
        parse_inventory(mutate(path, value, delete), "inv.yaml")
    msg = str(e.value)
    assert msg.startswith(f"inv.yaml: {field}"), msg
    assert words in msg and "(fix: " in msg and "\n" not in msg
    assert e.value.exit_code == 2


def test_not_yaml_and_not_mapping():
    with pytest.raises(InputError, match=r"inv.yaml line \d+: not valid YAML"):
        parse_inventory("switches: [\n", "inv.yaml")
    with pytest.raises(InputError, match="must be a YAML mapping"):
        parse_inventory("- a\n", "inv.yaml")


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read the inventory"):
        load_inventory(tmp_path / "nope.yaml")


def test_secret_references(tmp_path, monkeypatch):
    monkeypatch.delenv("HL_TEST_PW", raising=False)
    sw = parse_inventory(yaml.safe_dump(GOOD), "inv.yaml").switches[0]
    with pytest.raises(InputError, match=r"password_env: environment variable HL_TEST_PW is not set"):
        sw.password("inv.yaml: switches[0]")
    monkeypatch.setenv("HL_TEST_PW", "s3cret")
    assert sw.password() == "s3cret"
    f = tmp_path / "pw"
    f.write_text("filepw\n")
    os.chmod(f, 0o644)
    d = mutate(("switches", 0, "password_env"), None, delete=True)
    d = yaml.safe_load(d)
    d["switches"][0]["password_file"] = str(f)
    sw = parse_inventory(yaml.safe_dump(d), "inv.yaml").switches[0]
    with pytest.raises(InputError, match=r"readable by others .*chmod 600"):
        sw.password("inv.yaml: switches[0]")
    os.chmod(f, 0o600)
    assert sw.password() == "filepw"
    f.unlink()
    with pytest.raises(InputError, match=r"password_file: cannot read"):
        sw.password("inv.yaml: switches[0]")


def test_port_index():
    assert port_index("FastEthernet0/7") == 7
    assert port_index("GigabitEthernet1/0/12") == 12
    assert port_index("Port-channel") is None
