"""Switches from NetBox: a local HTTP server answers NetBox's REST API (devices endpoint) the way NetBox 3.x/4.x does;
the real Nornir NetBox plugin (nornir-netbox) reads it and HARMLESS validates the result like a file inventory."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from harmless.errors import DeviceError, InputError
from harmless.inventory import parse_inventory

TOKEN = "nb-test-token-0123"


def device(i, name, slug, ctx, role="access-switch"):
    return {"id": i, "name": name, "platform": {"id": 1, "name": slug, "slug": slug},
            "primary_ip": {"address": f"192.0.2.{i}/24"}, "role": {"slug": role}, "device_role": {"slug": role},
            "site": {"slug": "campus"}, "device_type": {"slug": "ws-c2960", "manufacturer": {"slug": "cisco"}},
            "custom_fields": {}, "config_context": ctx}


HARMLESS_CTX = {"harmless": {"trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1"}],
                             "access_ports": ["FastEthernet0/7", "FastEthernet0/8"], "vlan_range": "100-199"}}
DEVICES = [device(11, "Edge1", "cisco-ios", HARMLESS_CTX),
           device(12, "edge2", "arista-eos", {**HARMLESS_CTX, "harmless": {
               **HARMLESS_CTX["harmless"], "driver": "ios",
               "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth2"}]}}),
           device(13, "core1", "cisco-ios", {}),                                 # no harmless context: skipped
           device(14, "printer", "cisco-ios", HARMLESS_CTX, role="other")]       # filtered out by role


class FakeNetBox(BaseHTTPRequestHandler):
    """Answers GET /api/dcim/devices/ with NetBox's paginated shape, filtering by role; needs the token."""

    def do_GET(self):  # noqa: N802 - http.server API
        u = urlparse(self.path)
        if self.headers.get("Authorization") != f"Token {TOKEN}":
            self.send_response(403)
            self.end_headers()
            return
        if u.path != "/api/dcim/devices/":
            self.send_response(404)
            self.end_headers()
            return
        roles = parse_qs(u.query).get("role")
        res = [d for d in DEVICES if not roles or d["role"]["slug"] in roles]
        body = json.dumps({"count": len(res), "next": None, "previous": None, "results": res}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


@pytest.fixture(scope="module")
def netbox_url():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeNetBox)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def inv_text(url, **nb):
    return yaml.safe_dump({"netbox": {"url": url, "token_env": "HL_NB_TOKEN", "filter": {"role": "access-switch"},
                                      "defaults": {"username": "admin", "password_env": "SW_PW"}, **nb}})


def test_devices_with_a_harmless_context_become_validated_switches(netbox_url, monkeypatch):
    monkeypatch.setenv("HL_NB_TOKEN", TOKEN)
    inv = parse_inventory(inv_text(netbox_url), "nb.yaml")
    assert [(s.name, s.driver, s.host, s.username) for s in inv.switches] == [
        ("edge1", "ios", "192.0.2.11", "admin"), ("edge2", "ios", "192.0.2.12", "admin")]
    assert [p.interface for p in inv.switches[0].access_ports] == ["FastEthernet0/7", "FastEthernet0/8"]
    assert TOKEN not in inv.model_dump_json()          # the token stays a reference


def test_netbox_errors_name_the_field_and_change_nothing(netbox_url, monkeypatch):
    monkeypatch.delenv("HL_NB_TOKEN", raising=False)
    with pytest.raises(InputError) as e:
        parse_inventory(inv_text(netbox_url), "nb.yaml")
    assert e.value.where == "nb.yaml: netbox.token_env"
    monkeypatch.setenv("HL_NB_TOKEN", "wrong-token")
    with pytest.raises(DeviceError) as e:
        parse_inventory(inv_text(netbox_url), "nb.yaml")
    assert e.value.where == "nb.yaml: netbox.url" and "wrong-token" not in str(e.value)
    monkeypatch.setenv("HL_NB_TOKEN", TOKEN)
    with pytest.raises(InputError) as e:
        parse_inventory(inv_text(netbox_url, filter={"role": "nothing-here"}), "nb.yaml")
    assert "no device" in e.value.problem
    with pytest.raises(InputError) as e:
        parse_inventory(inv_text(netbox_url, tokn="x"), "nb.yaml")
    assert e.value.where == "nb.yaml: netbox.tokn"
