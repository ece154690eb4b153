"""The lab switch's data plane: an emulated switch's VLAN config mirrored onto OVS ports (802.1Q behaviour).

Shared by every emulated vendor (:mod:`harmless.emulators.ios`, :mod:`harmless.emulators.eos`): the pure mapping
from a fake-switches ``Port`` to OVS ``Port`` columns (:func:`port_ovs_state`, :func:`desired_ovs_ports`,
:func:`vlan_limit`, :func:`vsctl_argv`), :class:`OvsSync` that applies the changes in one ``ovs-vsctl`` transaction
(argument list, no shell; run off the Twisted reactor thread so the management plane never stalls), and the
link-state reads that let "pulling a cable" reach the emulated device (:meth:`OvsSync.poll_links`,
:func:`ovs_link_states`). Commands run through :func:`harmless.procs.run`, transactions are joined by
:func:`harmless.ovs.transaction_args`. Imports nothing of the emulators themselves (no cycle).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable

from harmless import procs
from harmless.errors import HarmlessError
from harmless.ovs import transaction_args

log = logging.getLogger("harmless.emulators.dataplane")


def port_ovs_state(port) -> dict:
    """The OVS ``Port`` columns that reproduce one IOS switchport's 802.1Q behaviour.

    Args:
        port: a fake_switches ``Port`` (attributes ``mode``, ``access_vlan``, ``trunk_vlans``,
            ``trunk_native_vlan``).

    Returns:
        ``{"vlan_mode": str, "tag": int, "trunks": list[int]}``:
        access or no mode (IOS dynamic, which with a non-negotiating peer is access) → ``access``,
        tag = access VLAN (default 1); ``dot1q-tunnel`` → OVS ``dot1q-tunnel`` with ``qinq_ethtype`` ``802.1q``
        (Cisco's S-tag TPID is 0x8100); trunk →
        ``native-untagged`` with tag = native VLAN (default 1, untagged as on IOS) and
        trunks = allowed VLANs (``[]`` = all). An IOS ``allowed vlan none`` trunk becomes
        ``trunks=[native]`` (OVS cannot express "nothing"). ``shutdown`` is not mirrored.
    """
    if port.mode == "trunk":
        native = port.trunk_native_vlan or 1
        if port.trunk_vlans is None:
            trunks: list[int] = []
        else:
            trunks = sorted({v for v in port.trunk_vlans if 1 <= v <= 4094})
            if len(trunks) == 4094:
                trunks = []
            elif not trunks:
                trunks = [native]
        return {"vlan_mode": "native-untagged", "tag": native, "trunks": trunks}
    if port.mode == "dot1q-tunnel":    # Cisco dot1q-tunnel: the outer (S-)tag is 0x8100, not OVS's 802.1ad default
        return {"vlan_mode": "dot1q-tunnel", "tag": port.access_vlan or 1, "trunks": [], "qinq_ethtype": "802.1q"}
    return {"vlan_mode": "access", "tag": port.access_vlan or 1, "trunks": []}


def desired_ovs_ports(switch_configuration, port_map: dict[str, str]) -> dict[str, dict]:
    """Desired 802.1Q state of every mapped OVS port.

    Args:
        switch_configuration: fake_switches SwitchConfiguration of the emulated switch.
        port_map: ``{switch interface: OVS port}``, e.g. ``{"FastEthernet0/7": "fa0-7"}``.

    Returns:
        ``{ovs port: {"vlan_mode", "tag", "trunks"}}`` (see :func:`port_ovs_state`).

    Raises:
        KeyError: an interface of ``port_map`` does not exist on the switch.
    """
    out = {}
    for iface, ovs_port in port_map.items():
        port = switch_configuration.get_port(iface)
        if port is None:
            raise KeyError(f"switch has no interface {iface!r}")
        out[ovs_port] = port_ovs_state(port)
    return out


def vlan_limit(ports: dict[str, dict]) -> int:
    """``Open_vSwitch other_config:vlan-limit`` for the lab switch's OVS: 2 when a port is a QinQ customer port
    (``dot1q-tunnel``: OVS must parse the C-tag under the S-tag), else 1 — as on a real switch's access port, where
    only the outermost tag counts (OVS's default is 1 as well). Pure.

    Args:
        ports: ``{ovs port: state}`` as from :func:`desired_ovs_ports` (every port, not only changed ones).
    """
    return 2 if any(st.get("vlan_mode") == "dot1q-tunnel" for st in ports.values()) else 1


def vsctl_argv(db: str, changes: dict[str, dict], vsctl: str = "ovs-vsctl", limit: int | None = None,
               stamp: int | None = None) -> list[str]:
    """One ``ovs-vsctl`` transaction setting ``changes`` (``{ovs port: state}``) and, when ``limit`` is given,
    ``Open_vSwitch other_config:vlan-limit`` (see :func:`vlan_limit`); pure.

    ``stamp`` also writes ``Open_vSwitch other_config:harmless-sync=<stamp>``: Open vSwitch 3.1's ovs-vswitchd did
    not apply a ``--no-wait`` transaction that changed only ``Port:trunks`` (a trunk losing or gaining VLANs, as in
    an active/standby take-over) until a column it reads in the ``Open_vSwitch`` row changed too (seen in the
    two-trunk lab: the data plane kept flooding to the old trunk for minutes); a changing stamp there makes it
    reconfigure at once.

    Returns:
        e.g. ``["ovs-vsctl", "--db=unix:/x.sock", "--no-wait", "--timeout=5",
        "--", "set", "Port", "fa0-7", "vlan_mode=access", "tag=107", "trunks=[]"]``.
    """
    cmds = []
    for name in sorted(changes):
        st = changes[name]
        trunks = ",".join(str(v) for v in st["trunks"]) if st["trunks"] else "[]"
        cmds.append(["set", "Port", name, f"vlan_mode={st['vlan_mode']}", f"tag={st['tag']}", f"trunks={trunks}"])
        if "qinq_ethtype" in st:                          # dot1q-tunnel outer TPID (802.1q or 802.1ad)
            cmds[-1].append(f"other_config:qinq-ethtype={st['qinq_ethtype']}")
    if limit is not None:
        cmds.append(["set", "Open_vSwitch", ".", f"other_config:vlan-limit={limit}"])
    if stamp is not None:
        cmds.append(["set", "Open_vSwitch", ".", f"other_config:harmless-sync={stamp}"])
    return [vsctl, f"--db={db}", "--no-wait", "--timeout=5", *(["--"] if cmds else []), *transaction_args(cmds)]


class OvsSync:
    """Keeps the mapped OVS ports in line with the switch config (call :meth:`tick` periodically).

    Args:
        switch_configuration: the emulated switch's configuration.
        port_map: ``{switch interface: OVS port}``.
        db: OVSDB remote (``unix:/path/db.sock``).
        run: runs an argv and returns ``(returncode, stderr text)``; blocking (called off-reactor).
        on_change: called with the state dict after every successful apply or new error.
    """

    def __init__(self, switch_configuration, port_map: dict[str, str], db: str,
                 run: Callable[[list[str]], tuple[int, str]] | None = None,
                 on_change: Callable[[dict], None] | None = None):
        self.sc, self.port_map, self.db = switch_configuration, dict(port_map), db
        self.run = run or _run
        self.on_change = on_change or (lambda state: None)
        self.applied: dict[str, dict] = {}
        self.vlan_limit: int | None = None       # last vlan-limit written (None: not yet)
        self.error: str | None = None
        self.busy = False
        self.applies = 0

    def pending(self) -> dict[str, dict]:
        """Ports whose desired state differs from the last applied one."""
        desired = desired_ovs_ports(self.sc, self.port_map)
        return {p: s for p, s in desired.items() if self.applied.get(p) != s}

    def apply(self, changes: dict[str, dict]) -> bool:
        """Write ``changes`` in one transaction (blocking), with the vlan-limit the ports then need when it
        changes (:func:`vlan_limit`: 2 only while a dot1q-tunnel port exists). Returns True on success."""
        limit = vlan_limit({**self.applied, **changes})
        rc, err = self.run(vsctl_argv(self.db, changes, limit=None if limit == self.vlan_limit else limit,
                                      stamp=self.applies + 1))
        if rc == 0:
            self.vlan_limit = limit
            self.applied.update(changes)
            self.applies += 1
            self.error = None
            log.info("ovs: applied %s", json.dumps(changes, sort_keys=True))
            self.on_change(self.state())
            return True
        msg = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
        if msg != self.error:
            log.error("ovs: ovs-vsctl failed (will retry): %s", msg)
            self.error = msg
            self.on_change(self.state())
        return False

    def tick(self):
        """Reactor callback: compute pending changes, apply them in a thread. Returns a Deferred or None."""
        if self.busy:
            return None
        changes = self.pending()
        if not changes:
            return None
        from twisted.internet import threads

        self.busy = True
        d = threads.deferToThread(self.apply, changes)

        def done(result):
            self.busy = False
            return result

        d.addBoth(done)
        d.addErrback(lambda f: log.error("ovs: sync failed: %s", f.getErrorMessage()))
        return d

    def poll_links(self) -> set[str]:
        """Read the mapped OVS interfaces' ``link_state`` (blocking); return the switch interfaces whose link is down.

        This is how "pulling a cable" in the lab (``ip link set <veth> down`` in the switch's namespace) reaches the
        emulated device's ``show interfaces`` (line protocol down), hence NAPALM ``get_interfaces``.
        """
        rc, out = self.run_out(["ovs-vsctl", f"--db={self.db}", "--timeout=5", "--format=json", "--columns=name,"
                                "link_state", "list", "Interface"])
        if rc != 0:
            return set()
        by_ovs = {v: k for k, v in self.port_map.items()}
        down = set()
        for name, link in json.loads(out)["data"]:
            if name in by_ovs and link != "up":
                down.add(by_ovs[name])
        return down

    def run_out(self, argv: list[str]) -> tuple[int, str]:
        """``(returncode, stdout)`` of ``argv`` (10 s); never raises."""
        rc, out, _ = run_quiet(argv, timeout=10)
        return rc, out

    def state(self) -> dict:
        """JSON-able summary: applied port states, last error, number of transactions."""
        return {"applied": self.applied, "error": self.error, "applies": self.applies}


def run_quiet(argv: list[str], timeout: float) -> tuple[int, str, str]:
    """``(returncode, stdout, stderr)`` of ``argv`` through :func:`harmless.procs.run`; never raises: a program
    that is not installed or times out gives ``(1, text, text)`` with the error's text."""
    try:
        res = procs.run(argv, timeout=timeout, check=False)
    except HarmlessError as exc:
        return 1, str(exc), str(exc)
    return res.returncode, res.stdout, res.stderr


def _run(argv: list[str]) -> tuple[int, str]:
    """:class:`OvsSync`'s default runner: ``(returncode, stderr text)`` (15 s)."""
    rc, _, err = run_quiet(argv, timeout=15)
    return rc, err


def list_ports(db: str, bridge: str) -> tuple[int, str]:
    """``ovs-vsctl list-ports BRIDGE`` on ``db``: ``(returncode, stdout or stderr text)``; never raises."""
    rc, out, err = run_quiet(["ovs-vsctl", f"--db={db}", "--timeout=5", "list-ports", bridge], timeout=10)
    return rc, out if rc == 0 else err


def ovs_link_states(db: str, names: list[str]) -> dict[str, bool] | None:
    """``{OVS interface: link up}`` for ``names`` (one ``ovs-vsctl`` call; None when it failed)."""
    rc, out, _ = run_quiet(["ovs-vsctl", f"--db={db}", "--timeout=5", "--format=json", "--columns=name,link_state",
                            "list", "Interface", *names], timeout=10)
    if rc != 0:
        return None
    rows = json.loads(out)["data"]
    return {name: state == "up" for name, state in rows}
