"""The labs' shared parts: lab name selection, the netns primitives' commands, the launcher's listen check."""
from __future__ import annotations

import os
import socket

import pytest

from harmless.errors import InputError
from harmless.lab import controller, netns
from harmless.lab.naming import pick_lab


def test_pick_lab_named_only_running_several_none():
    assert pick_lab("a", [], "OSHI", "up") == "a"                       # named: taken as is
    assert pick_lab(None, ["x"], "OSHI", "up") == "x"                   # the only one up
    with pytest.raises(InputError, match="several overlay labs are up: x, y"):
        pick_lab(None, ["x", "y"], "overlay", "up")
    with pytest.raises(InputError, match="no OSHI lab is up"):
        pick_lab(None, [], "OSHI", "harmless oshi up")
    with pytest.raises(InputError, match="no overlay lab named 'z' is up"):
        pick_lab("z", ["x"], "overlay", "up", known=lambda n: n == "x")


def test_netns_primitives_run_the_expected_ip_commands(monkeypatch):
    calls = []
    monkeypatch.setattr(netns, "run", lambda argv, **kw: calls.append((list(argv), kw.get("netns"))))
    netns.veth("a", "ns1", "b", None, mtu=1500, b_mac="02:00:00:00:00:07")
    assert calls[0][0] == ["ip", "link", "add", "a", "netns", "ns1", "mtu", "1500", "type", "veth", "peer", "name",
                           "b", "address", "02:00:00:00:00:07", "mtu", "1500"]
    assert [c[0] for c in calls[1:]] == [["ip", "-n", "ns1", "link", "set", "dev", "a", "up"],
                                         ["ip", "link", "set", "dev", "b", "up"]]
    calls.clear()
    netns.add_ns("n", router=True)
    assert [c[0][:4] for c in calls[:2]] == [["ip", "netns", "add", "n"], ["ip", "-n", "n", "link"]]
    assert calls[2] == (["sysctl", "-qw", *netns.NO_IPV6, *netns.ROUTER], "n")
    calls.clear()
    netns.move("eth0", "h", "far", "p1")
    assert [c[0] for c in calls] == [["ip", "-n", "h", "link", "set", "eth0", "netns", "far"],
                                     ["ip", "-n", "far", "link", "set", "eth0", "name", "p1"]]


def test_listening_sees_a_listening_socket_of_a_process():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert not controller.listening(os.getpid(), port)
        s.listen()
        assert controller.listening(os.getpid(), port)


def test_lab_down_leaves_a_server_netns_processes_still_run_in(state_dir, monkeypatch):
    from harmless.lab import topology
    d = topology.lab_dir("x1")
    d.mkdir(parents=True)
    (d / topology.SERVER_NETNS_MARK).write_text("srvns")
    calls, said = [], []

    class Done:
        stdout = "4242\n"

    monkeypatch.setattr(netns, "exists", lambda n: True)
    monkeypatch.setattr(netns, "ip", lambda *a, **kw: calls.append(a) or Done())
    assert topology._server_netns_down("x1", said.append) is False
    assert calls == [("netns", "pids", "srvns")]                  # asked, never deleted
    assert "processes still run in it (4242)" in said[0] and "harmless down first" in said[0]
