"""One OVSDB transaction: :meth:`harmless.ovs.Ovs.transact` joins commands with ``--`` into one ``ovs-vsctl`` call
and runs nothing for an empty list (the two copies it replaced differed exactly there)."""
from __future__ import annotations

import pytest

from harmless import ovs as ovs_mod
from harmless.errors import OvsError
from harmless.ovs import Ovs, transaction_args


def test_transaction_args_join_commands_with_double_dash():
    assert transaction_args([]) == []
    assert transaction_args([["--may-exist", "add-br", "b"]]) == ["--may-exist", "add-br", "b"]
    assert transaction_args([["add-br", "b"], ["set", "Bridge", "b", "fail_mode=secure"], ["--if-exists", "del-br",
                                                                                            "c"]]) == \
        ["add-br", "b", "--", "set", "Bridge", "b", "fail_mode=secure", "--", "--if-exists", "del-br", "c"]


@pytest.fixture
def calls(monkeypatch):
    """Every command :mod:`harmless.ovs` runs, answered with ``ok``."""
    seen = []

    class Done:
        returncode, stdout, stderr = 0, "ok\n", ""

    def run(argv, env=None, stdin=None, timeout=30, check=True):
        seen.append((list(argv), timeout))
        return Done()

    monkeypatch.setattr(ovs_mod, "_run", run)
    return seen


def test_transact_is_one_ovs_vsctl_call(calls, tmp_path):
    o = Ovs(tmp_path)
    assert o.transact([["add-br", "b"], ["set", "Port", "b", "external_ids:harmless=x"]], timeout=20) == "ok\n"
    assert calls == [(["ovs-vsctl", f"--db=unix:{tmp_path}/run/db.sock", "--timeout=20",
                       "add-br", "b", "--", "set", "Port", "b", "external_ids:harmless=x"], 25)]


def test_transact_of_nothing_runs_nothing(calls, tmp_path):
    assert Ovs(tmp_path).transact([]) == ""
    assert calls == []


def test_transact_failure_is_an_ovs_error_naming_the_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))           # no ovs-vsctl on PATH
    with pytest.raises(OvsError, match="ovs-vsctl: command not found"):
        Ovs(tmp_path).transact([["add-br", "b"]])
