"""The bad-inventory corpus (``bad_inventories/NNN-*.yaml``) through the real CLI: every file is refused before any
device is contacted and before anything is written.

Each file's first line says what the error must name: ``# expect: <field path or "line N" or "(file)"> | <words of
the problem>``. ``LISTENER_PORT`` in a file becomes the port of a TCP listener this module starts (it counts accepted
connections: a device contacted would show there) and ``TLSDIR`` a folder of TLS and password files made here
(``empty.pw``, ``blank-first.pw``, the FIFO ``pw.fifo``). The password is in ``HL_TEST_PW`` (set for the CLI only;
``HL_TEST_EMPTY_PW`` is set but empty, ``HL_TEST_NEWLINE_PW`` holds a line break). Also: load-time bounds of issue #11 (256 MiB, 5 s) on a large valid inventory,
an alias bomb, deep nesting and an oversized file.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harmless.cli import main
from harmless.errors import InputError
from harmless.inventory import MAX_INVENTORY_BYTES, load_inventory, parse_inventory
from tests.conftest import wait_for

CORPUS = Path(__file__).parent / "bad_inventories"
FILES = sorted(CORPUS.glob("*.yaml"))
PASSWORD = "Corpus-Secret-Never-Printed-77"
#: files also run through ``harmless up -i`` (validation comes before its root check)
UP_TOO = ("alias-bomb-10-levels", "controller-bad-ipv4", "duplicate-key-host", "ofport-collision-fa-gi-stack",
          "same-device-twice", "ssl-without-tls", "tls-key-readable-by-others")

#: the inventory the corpus files are variations of; valid, so planning it contacts the listener (control case)
VALID = """\
server:
  datapath: netdev
switches:
- name: sw1
  driver: ios
  host: 127.0.0.1
  port: LISTENER_PORT
  username: admin
  password_env: HL_TEST_PW
  trunks:
  - switch_port: GigabitEthernet0/1
    server_interface: hl-trunk0
  access_ports:
  - FastEthernet0/7
  - FastEthernet0/8
  vlan_range: 100-199
  openflow:
    versions: [OpenFlow13]
    controllers: ['tcp:127.0.0.1:6653']
"""


class Listener:
    """A TCP listener on 127.0.0.1 that accepts, counts and closes connections (a device that was contacted)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            conn.close()

    def close(self):
        self._stop = True
        self.sock.close()


@pytest.fixture(scope="module")
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture(scope="module")
def tlsdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    for name, mode in (("switch.key", 0o600), ("open.key", 0o644), ("switch.pem", 0o644), ("ca.pem", 0o644)):
        (d / name).write_text("-----BEGIN TEST-----\nnot a real key\n-----END TEST-----\n")
        os.chmod(d / name, mode)
    for name, text in (("empty.pw", ""), ("blank-first.pw", f"\n{PASSWORD}\n")):
        (d / name).write_text(text)
        os.chmod(d / name, 0o600)
    os.mkfifo(d / "pw.fifo", 0o600)
    return d


def unblock_later(fifo: Path, after_s: float) -> threading.Timer:
    """A guard, not a wait: if a regression opened ``fifo`` for a blocking read, a writer opens it after ``after_s``
    so the read ends (the test then fails on the message instead of hanging the suite)."""
    def poke():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))   # ENXIO (no reader): nothing was blocked
        except OSError:
            pass
    t = threading.Timer(after_s, poke)
    t.daemon = True
    t.start()
    return t


def materialise(src: Path, dest: Path, listener: Listener, tlsdir: Path) -> Path:
    out = dest / src.name
    out.write_bytes(src.read_bytes().replace(b"LISTENER_PORT", str(listener.port).encode())
                    .replace(b"TLSDIR", str(tlsdir).encode()))
    return out


def expectation(src: Path) -> tuple[str, str]:
    raw = src.read_bytes()
    text = raw.decode("utf-16") if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else raw.decode("utf-8", "replace")
    m = re.match(r"# expect: (.+?) \| (.+)\n", text)
    assert m, f"{src.name}: first line must be '# expect: <field> | <words>'"
    return m.group(1), m.group(2)


def run_cli(args: list[str], state: Path) -> tuple[int, str, str]:
    env = {"HL_TEST_PW": PASSWORD, "HARMLESS_STATE_DIR": str(state), "HL_TEST_UNSET_PW": None,
           "HL_TEST_EMPTY_PW": "", "HL_TEST_NEWLINE_PW": f"{PASSWORD}\nshow running-config"}
    r = CliRunner().invoke(main, args, env=env)
    return r.exit_code, r.stdout, r.stderr


def assert_refused(src: Path, inv: Path, code: int, out: str, err: str, listener: Listener, before: int,
                   state: Path) -> None:
    expect, words = expectation(src)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, f"{src.name}: exit {code}\n{err}{out}"
    assert len(lines) == 1 and lines[0].startswith(f"error: {inv}"), f"{src.name}: {err!r}"
    line = lines[0]
    if expect == "(file)":                   # the file as a whole: no field path or line after its name
        rest = line.removeprefix(f"error: {inv}")
        assert rest.startswith(": ") and not re.match(r": [\w.]+(\[\d+\])*[.\[:]", rest), line
    else:
        assert expect in line, f"{src.name}: {expect!r} not in {line!r}"
    assert words in line, f"{src.name}: {words!r} not in {line!r}"
    assert re.search(r"\(fix: .+\)$", line), line
    assert "Traceback" not in err + out and "internal error" not in err
    assert PASSWORD not in err + out
    assert listener.count == before, f"{src.name}: a device was contacted"
    assert not state.exists() or not any(state.iterdir()), f"{src.name}: wrote {list(state.iterdir())}"


def test_corpus_is_large_enough_and_well_formed():
    assert len(FILES) >= 60
    assert all(re.fullmatch(r"\d{3}-[a-z0-9-]+\.yaml", f.name) for f in FILES)
    for f in FILES:
        expectation(f)


@pytest.mark.parametrize("src", FILES, ids=[f.stem for f in FILES])
def test_plan_refuses_bad_inventory_before_contact(src, listener, tlsdir, tmp_path):
    inv = materialise(src, tmp_path, listener, tlsdir)
    state = tmp_path / "state"
    before = listener.count
    guard = unblock_later(tlsdir / "pw.fifo", 30)
    try:
        code, out, err = run_cli(["plan", "-i", str(inv)], state)
    finally:
        guard.cancel()
    assert_refused(src, inv, code, out, err, listener, before, state)


@pytest.mark.parametrize("kind, words", [("directory", "is a directory, not an inventory file"),
                                         ("fifo", "is a FIFO (named pipe), not an inventory file")])
def test_inventory_that_is_not_a_regular_file_is_one_clear_error(kind, words, tmp_path):
    """A directory or a FIFO given as -i: one error line naming it (not click's usage text); a FIFO is refused
    without a blocking open (`plan` in a separate process with a timeout, so a hang fails instead of stalling; the
    other commands in-process with a writer poked in after 30 s as a guard)."""
    inv = tmp_path / "inv.yaml"
    if kind == "directory":
        inv.mkdir()
    else:
        os.mkfifo(inv)
        p = subprocess.run([sys.executable, "-c", "from harmless.cli import main; main()", "plan", "-i", str(inv)],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "HARMLESS_STATE_DIR": str(tmp_path / "st")})
        assert p.returncode == 2 and p.stderr.strip() == f"error: {inv}: {words} (fix: pass the inventory YAML file "\
                                                         "with -i)", p.stderr
    for cmd in (["plan", "-i", str(inv)], ["ports", "-i", str(inv)], ["up", "-i", str(inv), "--dry-run"]):
        guard = unblock_later(inv, 30) if kind == "fifo" else None
        try:
            code, out, err = run_cli(cmd, tmp_path / "st")
        finally:
            if guard:
                guard.cancel()
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert code == 2 and len(lines) == 1, (cmd, err)
        assert lines[0].startswith(f"error: {inv}: {words}") and "(fix: pass the inventory YAML file" in lines[0]
        assert "Usage:" not in err + out
    assert not (tmp_path / "st").exists()


@pytest.mark.parametrize("name", UP_TOO)
def test_up_refuses_bad_inventory_before_contact(name, listener, tlsdir, tmp_path):
    # `up` validates the inventory before it checks for root, so this runs without root too
    src = next(f for f in FILES if f.stem.split("-", 1)[1] == name)
    inv = materialise(src, tmp_path, listener, tlsdir)
    state = tmp_path / "state"
    before = listener.count
    code, out, err = run_cli(["up", "-i", str(inv)], state)
    assert_refused(src, inv, code, out, err, listener, before, state)


def test_control_a_valid_inventory_does_contact_the_listener(listener, tmp_path):
    """The corpus's base inventory is valid: planning it connects to the listener (so a count of 0 above means
    the bad files were refused before contact, not that contact could not be seen)."""
    inv = tmp_path / "good.yaml"
    inv.write_text(VALID.replace("LISTENER_PORT", str(listener.port)))
    before = listener.count
    code, out, err = run_cli(["plan", "-i", str(inv)], tmp_path / "state")
    assert code == 1, err                                # the listener is no SSH server
    wait_for(lambda: listener.count > before, 5, "a connection to the listener", 0.05)
    assert listener.count > before
    assert PASSWORD not in err + out


# ----------------------------------------------------------------------------- load-time bounds (issue #11)
def big_inventory(switches=200, ports=48) -> str:
    sws = [{"name": f"s{i}", "driver": "ios", "host": f"10.0.{i // 250}.{i % 250 + 1}", "username": "admin",
            "password_env": "X",
            "trunks": [{"switch_port": "TenGigabitEthernet1/1/1", "server_interface": f"t{i}"}],
            "access_ports": [{"interface": f"GigabitEthernet{m}/0/{n}", "vid": 100 + (m - 1) * 24 + n}
                             for m in (1, 2) for n in range(1, ports // 2 + 1)],
            "vlan_range": "100-199", "openflow": {"controllers": ["tcp:192.0.2.1:6653"]}}
           for i in range(switches)]
    return yaml.safe_dump({"switches": sws})


#: loads an inventory in a fresh interpreter; prints the load's CPU time (s) and the process's peak RSS (MiB), which
#: includes the interpreter and harmless's imports. CPU time, not wall time: the bound is on the work a hostile
#: inventory can cause, and wall time on a loaded 2-core machine failed it with the same work (5.3 s wall, 1.9 s CPU)
MEASURE = """
import sys, time
import harmless.cli
from harmless.errors import InputError
from harmless.inventory import load_inventory
t0 = time.process_time()
try:
    load_inventory(sys.argv[1])
    result = "valid"
except InputError as e:
    result = str(e)
# VmHWM: this interpreter's own peak RSS (ru_maxrss keeps the forking parent's peak across exec)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(time.process_time() - t0, hwm / 1024)
print(result)
"""


def measure(path: Path) -> tuple[float, float, str]:
    p = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    first, result = p.stdout.splitlines()[:2]
    elapsed, rss = map(float, first.split())
    return elapsed, rss, result


def test_large_valid_inventory_loads_within_the_bounds(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text(big_inventory())
    inv = load_inventory(p)
    assert len(inv.switches) == 200 and sum(len(s.access_ports) for s in inv.switches) == 9600
    assert {inv.switches[7].ofport_of(p) for p in inv.switches[7].access_ports} == \
        set(range(1, 25)) | set(range(2001, 2025))
    elapsed, rss, result = measure(p)
    assert result == "valid" and elapsed < 5 and rss < 256, (elapsed, rss)


def test_the_largest_inventory_the_limits_let_through_stays_within_the_bounds(tmp_path):
    """Just under MAX_YAML_NODES: 16,000 fully written access ports (9 nodes each, 1.3 MB)."""
    ports = "".join(f"  - {{interface: GigabitEthernet1/0/{i}, vid: {i}, qinq: false, trunk: Gi0/1}}\n"
                    for i in range(16_000))
    p = tmp_path / "worst.yaml"
    p.write_text(VALID.replace("LISTENER_PORT", "22").replace(
        "  - FastEthernet0/7\n  - FastEthernet0/8\n", ports))
    elapsed, rss, result = measure(p)
    assert "switches[0].access_ports[0]" in result            # GigabitEthernet1/0/0 is port 0: refused, but only
    assert elapsed < 5 and rss < 256, (elapsed, rss)          # after everything was read and validated


def bounded(fn) -> tuple[InputError, float, int]:
    """Run ``fn`` (which must raise InputError): ``(error, CPU seconds of this process, peak traced bytes)``."""
    tracemalloc.start()
    t0 = time.process_time()
    try:
        with pytest.raises(InputError) as e:
            fn()
        return e.value, time.process_time() - t0, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_alias_bomb_is_refused_quickly_in_little_memory():
    text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]\n" for k in range(1, 10))
    err, elapsed, peak = bounded(lambda: parse_inventory(text, "bomb.yaml"))   # 10**10 nodes if expanded
    assert "expands to more than" in str(err) and err.exit_code == 2
    assert elapsed < 2 and peak < 32 * 2 ** 20, (elapsed, peak)


def test_deep_nesting_is_refused_without_crashing():
    # libyaml's composer recurses in C: 100,000 levels would overflow the C stack (segfault) if it ever saw them
    err, elapsed, peak = bounded(lambda: parse_inventory("[" * 100_000 + "]" * 100_000, "deep.yaml"))
    assert "nested more than" in str(err) and elapsed < 2 and peak < 32 * 2 ** 20


def test_too_many_nodes_and_too_large_files_are_refused(tmp_path):
    flat = "switches: [" + ", ".join(["x"] * 200_000) + "]\n"          # 0.6 MB, 200,000 nodes
    err, elapsed, peak = bounded(lambda: parse_inventory(flat, "flat.yaml"))
    assert "more than 150000 YAML nodes" in str(err) and elapsed < 5 and peak < 64 * 2 ** 20
    p = tmp_path / "huge.yaml"
    p.write_bytes(b"# padding\n" * (MAX_INVENTORY_BYTES // 10 + 1))
    err, elapsed, peak = bounded(lambda: load_inventory(p))
    assert "larger than 4 MiB" in str(err) and elapsed < 1
