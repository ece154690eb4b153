"""Inventory validation: every malformed input gives one InputError naming file, field and fix."""
import os

import pytest
import yaml

from harmless.errors import InputError
from harmless.inventory import host_problem, load_inventory, parse_controller, parse_inventory, port_index

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
    assert sw.trunks[0].type == "auto"
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
    (("switches", 0, "colour"), "blue", False, "switches[0].colour", "unknown key"),
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
    assert port_index("GigabitEthernet2/0/12") == 2012            # stack member 2 (docs/ofport-numbering.md)
    assert port_index("Port-channel1") == 60001 and port_index("Ethernet7", "eos") == 7
    assert port_index("ge-1/0/3", "junos") == 1003 and port_index("B3", "procurve") == 103
    assert port_index("Port-channel") is None and port_index("ge-0/0/0", "junos") is None


@pytest.mark.parametrize("target,parsed", [
    ("tcp:127.0.0.1:6653", ("tcp", "127.0.0.1", 6653)), ("tcp:127.0.0.1", ("tcp", "127.0.0.1", 6653)),
    ("ssl:[::1]:6633", ("ssl", "::1", 6633)), ("tcp:[0:0::1]", ("tcp", "::1", 6653)),
    ("tcp:Ctrl.Example.org:6653", ("tcp", "ctrl.example.org", 6653)), ("tcp:1.2.3.4:65535", ("tcp", "1.2.3.4", 65535)),
])
def test_parse_controller(target, parsed):
    assert parse_controller(target) == parsed


@pytest.mark.parametrize("target,words", [
    ("tcp:999.1.1.1:6653", "not a valid IPv4"), ("tcp:1.2.3.4:0", "port 0"), ("tcp:1.2.3.4:99999", "port 99999"),
    ("tcp:1.2.3.4:", "nothing after"), ("udp:1.2.3.4:6653", "not tcp:IP:PORT"), ("tcp:[1.2.3.4]:6653", "not an IPv6"),
    ("tcp:::1", "brackets"), ("tcp:a..b:6653", "not a valid IP address or DNS name"), ("1.2.3.4:6653", "not tcp:"),
])
def test_parse_controller_refusals(target, words):
    with pytest.raises(ValueError, match=words):
        parse_controller(target)


@pytest.mark.parametrize("host,ok", [
    ("192.0.2.10", True), ("2001:db8::1", True), ("sw1", True), ("sw1.lab.example.org.", True), ("a-b", True),
    ("999.1.1.1", False), ("10.0.0", False), ("sw_1", False), ("-sw1", False), ("sw1:22", False),
    ("ssh://sw1", False), ("[::1]", False), ("a" * 64 + ".example", False), (" sw1", False),
])
def test_host_problem(host, ok):
    assert (host_problem(host) is None) == ok


def valid(**changes):
    d = yaml.safe_load(yaml.safe_dump(GOOD))
    d["switches"][0].update(changes)
    return parse_inventory(yaml.safe_dump(d), "inv.yaml")


def test_valid_spellings_are_accepted_and_kept_as_written():
    sw = valid(access_ports=["Fa0/7", {"interface": "fa0/10", "trunk": "Gi0/1"}, "GigabitEthernet1/0/9"],
               trunks=[{"switch_port": "gigabitethernet0/1", "server_interface": "eth1"}])
    sw = sw.switches[0]
    assert [p.interface for p in sw.access_ports] == ["Fa0/7", "fa0/10", "GigabitEthernet1/0/9"]    # as written
    assert [sw.ofport_of(p) for p in sw.access_ports] == [7, 10, 9]
    assert sw.canonical(sw.access_ports[1].trunk) == sw.canonical(sw.trunks[0].switch_port) == "GigabitEthernet0/1"


def test_stack_ports_with_distinct_numbers_and_explicit_ofport_resolve_collisions():
    sw = valid(access_ports=["Gi1/0/7", "Gi2/0/7", "Po1", {"interface": "Fa0/7", "ofport": 907}]).switches[0]
    assert [sw.ofport_of(p) for p in sw.access_ports] == [7, 2007, 60001, 907]


def test_procurve_numbers_and_int_names_and_int_datapath_id():
    inv = parse_inventory(yaml.safe_dump({"switches": [{
        "name": "hp1", "driver": "procurve", "host": "192.0.2.20", "username": "manager", "password_env": "X",
        "trunks": [{"switch_port": 24, "server_interface": "eth1"}], "access_ports": [7, "a1", {"interface": 8}],
        "datapath_id": 0x2a}]}), "inv.yaml")
    sw = inv.switches[0]
    assert [p.interface for p in sw.access_ports] == ["7", "a1", "8"] and sw.trunks[0].switch_port == "24"
    assert [sw.ofport_of(p) for p in sw.access_ports] == [7, 1, 8] and sw.dpid == "000000000000002a"


def test_tls_files_are_checked(tmp_path):
    for name in ("key.pem", "cert.pem", "ca.pem"):
        (tmp_path / name).write_text("pem\n")
    os.chmod(tmp_path / "key.pem", 0o600)
    tls = {"private_key": str(tmp_path / "key.pem"), "certificate": str(tmp_path / "cert.pem"),
           "ca_cert": str(tmp_path / "ca.pem")}
    sw = valid(openflow={"controllers": ["ssl:192.0.2.1:6653", "tcp:[2001:db8::1]:6653"], "tls": tls}).switches[0]
    assert sw.openflow.tls.private_key.endswith("key.pem")
    os.chmod(tmp_path / "key.pem", 0o640)
    with pytest.raises(InputError, match=r"openflow.tls.private_key: .* readable by others .*chmod 600"):
        valid(openflow={"controllers": ["ssl:192.0.2.1:6653"], "tls": tls})


def test_dpdk_mask_with_more_cpus_than_this_machine_warns(caplog):
    d = yaml.safe_load(yaml.safe_dump(GOOD))
    d["server"] = {"datapath": "dpdk", "dpdk": {"pmd_cpu_mask": "0x" + "f" * 64}}
    with caplog.at_level("WARNING", logger="harmless.inventory"):
        parse_inventory(yaml.safe_dump(d), "inv.yaml")
    assert "server.dpdk.pmd_cpu_mask" in caplog.text and "CPU 255" in caplog.text


def test_duplicate_keys_name_the_field_and_both_lines():
    text = yaml.safe_dump(GOOD, sort_keys=False).replace("  port: 22\n", "  port: 22\n  port: 2222\n")
    with pytest.raises(InputError) as e:
        parse_inventory(text, "inv.yaml")
    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines, 1) if ln == "  port: 22")
    assert e.value.where == "inv.yaml: switches[0].port" and f"lines {first} and {first + 1}" in e.value.problem


def test_merge_keys_are_not_duplicates():
    text = ("defaults: &d {driver: ios, username: admin, password_env: X, vlan_range: 100-199}\n"
            "switches:\n- <<: *d\n  name: sw1\n  host: 192.0.2.1\n"
            "  trunks: [{switch_port: Gi0/1, server_interface: eth1}]\n  access_ports: [Fa0/7]\n")
    with pytest.raises(InputError, match="defaults: unknown key"):      # merges work; unknown top-level key refused
        parse_inventory(text, "inv.yaml")


def test_non_utf8_and_utf8_bom(tmp_path):
    p = tmp_path / "inv.yaml"
    p.write_bytes(b"\xef\xbb\xbf" + yaml.safe_dump(GOOD).encode())
    assert load_inventory(p).switches[0].name == "sw1"
    p.write_bytes(yaml.safe_dump(GOOD).encode() + b"# caf\xe9\n")
    with pytest.raises(InputError, match=r"inv.yaml line \d+: not UTF-8 \(byte 0xe9"):
        load_inventory(p)


def _leaves(d, path=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _leaves(v, (*path, i))
    yield path


@pytest.mark.parametrize("value", [None, [], {}, 0, -1, True, 1.5, "", "x" * 5000, [[[]]], {"a": {"b": 1}}])
def test_any_value_anywhere_is_accepted_or_refused_in_one_line(value):
    """Every field of GOOD replaced by a value of another type: an InputError (one line with a fix) or a valid
    inventory, never another exception."""
    for path in _leaves(GOOD):
        if not path:
            continue
        d = yaml.safe_load(yaml.safe_dump(GOOD))
        cur = d
        for k in path[:-1]:
            cur = cur[k]
        cur[path[-1]] = value
        try:
            parse_inventory(yaml.safe_dump(d), "inv.yaml")
        except InputError as e:
            assert "\n" not in str(e) and "(fix: " in str(e) and str(e).startswith("inv.yaml"), (path, str(e))


def test_random_edits_of_the_text_are_accepted_or_refused_in_one_line():
    import random
    rnd = random.Random(11)
    base = yaml.safe_dump(GOOD, sort_keys=False)
    alphabet = list(":-[]{}&*!|>'\"#%@`,?\t\n 0123456789abcGiFa/.\x00\xe9") + ["  ", "- ", ": ", "*a", "&a ", "<<: "]
    refused = 0
    for _ in range(400):
        t = list(base)
        for _ in range(rnd.randint(1, 4)):
            k = rnd.randrange(len(t))
            op = rnd.random()
            if op < 0.4:
                t[k] = rnd.choice(alphabet)
            elif op < 0.7:
                t.insert(k, rnd.choice(alphabet))
            else:
                del t[k]
        try:
            parse_inventory("".join(t), "inv.yaml")
        except InputError as e:
            refused += 1
            assert "\n" not in str(e) and "(fix: " in str(e), str(e)
    assert refused > 100          # the edits do break inventories
