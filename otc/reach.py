"""Can the server reach each OpenFlow controller? Checked before any device is touched (issue #25).

For every ``tcp:``/``ssl:`` target of every br-of, from the network namespace HARMLESS's OVS runs in
(``server.netns``; the probe runs there as ``python -m harmless.otc.reach`` through :func:`harmless.procs.run`):

1. a TCP connection (``Connection refused``, ``No route to host``, a timeout are refusals of ``up``);
2. for ``ssl:`` the TLS handshake with the inventory's ``openflow.tls`` material, as OVS makes it (the switch's key
   and certificate, the controller's certificate verified against ``ca_cert``, no host name check): a certificate
   the CA did not sign, or the controller's alert (``tlsv1 alert unknown ca``: it does not trust our certificate;
   with TLS 1.3 it arrives after the handshake, at the first read) are refusals;
3. the controller's OpenFlow HELLO (OpenFlow 1.3.5 spec, Sec. 6.3.1 "Connection setup": each side sends
   OFPT_HELLO as soon as the connection is up). Nothing is sent; no HELLO within the timeout is a warning
   (something listens there, but it may not be an OpenFlow controller).

A br-of with several controllers is refused only when none of them answers (OVS connects to each, and ``up`` waits
for one); the others are warnings. ``up`` keeps probing for up to ``--wait-controller`` seconds (a controller that
is still starting) before it refuses; ``harmless up --no-wait`` skips the check (a controller started later).
"""
from __future__ import annotations

import json
import os
import socket
import ssl
import sys
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from harmless import procs
from harmless.errors import Finding, HarmlessError
from harmless.inventory import Inventory, parse_controller

__all__ = ["ControllerCheck", "check_controllers", "probe", "probe_in_netns"]

#: seconds for the TCP connection, the TLS handshake and the HELLO, each
PROBE_TIMEOUT_S = 3.0
#: OpenFlow header: version, type (0 = OFPT_HELLO), length, xid (OpenFlow 1.3.5 spec, Sec. 7.1)
_OFPT_HELLO = 0
_OF_VERSIONS = {1: "OpenFlow10", 2: "OpenFlow11", 3: "OpenFlow12", 4: "OpenFlow13", 5: "OpenFlow14", 6: "OpenFlow15"}


class ControllerCheck(BaseModel):
    """One controller target checked from the server.

    Attributes:
        switch: the inventory switch; bridge: its br-of; target: ``tcp:IP:PORT``/``ssl:IP:PORT``.
        stage: how far it got: ``tcp`` (no connection), ``tls`` (handshake or alert), ``hello`` (connected, no
            OpenFlow HELLO), ``ok`` (HELLO received).
        reason: why it stopped ('' when ``ok``), e.g. ``Connection refused``, ``tlsv1 alert unknown ca``.
        hello: the OpenFlow version of the controller's HELLO (``OpenFlow13``), None without one.
    """

    switch: str
    bridge: str
    target: str
    stage: Literal["tcp", "tls", "hello", "ok", "unchecked"]
    reason: str = ""
    hello: str | None = None

    @property
    def reachable(self) -> bool:
        """A connection (and TLS session) was made; a missing HELLO alone does not make it unreachable."""
        return self.stage in ("hello", "ok")


def _ssl_reason(e: ssl.SSLError) -> str:
    if isinstance(e, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {e.verify_message} (the controller's certificate is not signed by " \
               "openflow.tls.ca_cert)"
    text = (e.reason or str(e)).lower().replace("_", " ")
    if "alert" in text:
        text += " (the controller refused this server's certificate: is openflow.tls.certificate signed by a CA " \
                "the controller trusts?)"
    return text


def _tls(sock: socket.socket, host: str, tls: list[str] | None) -> ssl.SSLSocket:
    """The TLS session over ``sock`` as OVS makes it (``tls``: private key, certificate, CA certificate)."""
    if not tls:
        raise ssl.SSLError("openflow.tls is not set")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False                        # OVS verifies the peer certificate against the CA only
    key, cert, ca = (str(Path(p).expanduser()) for p in tls)
    try:
        ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(ca)
    except OSError as e:
        raise ssl.SSLError(f"cannot load the openflow.tls files ({e.strerror or e})") from None
    return ctx.wrap_socket(sock, server_hostname=host or None)


def _hello(sock: socket.socket) -> tuple[str, str, str | None]:
    """``(stage, reason, version)`` from the controller's first 8 bytes."""
    try:
        head = sock.recv(8)
    except ssl.SSLError as e:                         # TLS 1.3: the controller's alert arrives here
        return "tls", _ssl_reason(e), None
    except TimeoutError:
        return "hello", "connected, but no OpenFlow HELLO came within the timeout (is it an OpenFlow " \
                        "controller?)", None
    except OSError as e:
        return "hello", f"connected, then {e.strerror or e}", None
    if len(head) < 2:
        return "hello", "connected, then the controller closed the connection without an OpenFlow HELLO", None
    if head[1] != _OFPT_HELLO:
        return "hello", f"connected, but the first message is not an OpenFlow HELLO (type {head[1]})", None
    return "ok", "", _OF_VERSIONS.get(head[0], f"version {head[0]:#04x}")


def probe(target: str, tls: list[str] | None = None, timeout: float = PROBE_TIMEOUT_S) -> dict:
    """Connect to one controller target from this namespace and wait for its HELLO (closes again; sends nothing).

    Args:
        target: ``tcp:HOST:PORT`` or ``ssl:HOST:PORT``.
        tls: ``[private_key, certificate, ca_cert]`` paths for ``ssl:``.
        timeout: seconds for each stage.

    Returns:
        ``{"stage", "reason", "hello"}`` as in :class:`ControllerCheck`.
    """
    try:
        method, host, port = parse_controller(target)
    except ValueError as e:
        return {"stage": "tcp", "reason": str(e), "hello": None}
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        return {"stage": "tcp", "reason": f"no answer within {timeout:g} s (connection timed out)", "hello": None}
    except OSError as e:
        return {"stage": "tcp", "reason": e.strerror or str(e), "hello": None}
    try:
        if method == "ssl":
            try:
                sock = _tls(sock, host, tls)
            except ssl.SSLError as e:
                return {"stage": "tls", "reason": _ssl_reason(e), "hello": None}
            except OSError as e:
                return {"stage": "tls", "reason": f"TLS handshake failed: {e.strerror or e}", "hello": None}
        stage, reason, version = _hello(sock)
        return {"stage": stage, "reason": reason, "hello": version}
    finally:
        sock.close()


def probe_in_netns(jobs: list[dict], netns: str | None, timeout: float = PROBE_TIMEOUT_S) -> list[dict]:
    """:func:`probe` for each ``{"target", "tls"}`` of ``jobs``, from network namespace ``netns`` (this one when
    None): one ``python -m harmless.otc.reach`` there, all targets in one run.

    Raises:
        HarmlessError: the probe could not run in ``netns`` (no such namespace, not root).
    """
    if not netns:
        return [probe(j["target"], j.get("tls"), timeout) for j in jobs]
    p = procs.run([sys.executable, "-m", "harmless.otc.reach", str(timeout)], netns=netns, stdin=json.dumps(jobs),
                  timeout=30 + 3 * timeout * len(jobs), where=f"controller check in namespace {netns}",
                  fix="run as root, and check that server.netns exists (ip netns list)")
    return json.loads(p.stdout)


def _jobs(inv: Inventory, only: set[str] | None = None) -> list[tuple[int, str, str, list[str] | None]]:
    out = []
    for i, sw in enumerate(inv.switches):
        if only is not None and sw.name not in only:
            continue
        tls = sw.openflow.tls
        for target in sw.openflow.controllers:
            out.append((i, sw.name, target, [tls.private_key, tls.certificate, tls.ca_cert] if tls else None))
    return out


def check_controllers(inv: Inventory, src: str, timeout: float = PROBE_TIMEOUT_S, wait_s: float = 0,
                      progress=lambda m: None, only: set[str] | None = None
                      ) -> tuple[list[ControllerCheck], list[Finding]]:
    """Check every controller of every switch from the server's namespace (:func:`probe_in_netns`).

    Args:
        wait_s: keep probing (about once a second) for up to this many seconds while some br-of has no reachable
            controller (a controller that is still starting); 0: probe once.
        progress: one-line progress callback (told when it waits).
        only: check only these switches (``--switch``); None: all.

    Returns:
        ``(checks, findings)``: per br-of with controllers, a refusal when none is reachable (the reason of each
        and the fix), a warning per other unreachable controller or one without a HELLO; a warning when the
        check could not run at all (then ``checks`` are ``unchecked``).
    """
    jobs = _jobs(inv, only)
    if not jobs:
        return [], []
    ns = inv.server.netns
    end = time.monotonic() + wait_s
    told = False
    while True:
        try:
            if ns and not os.path.exists(f"/run/netns/{ns}"):
                raise HarmlessError(f"{src}: server.netns", f"no network namespace {ns}",
                                    f"create it (ip netns add {ns}) or remove server.netns")
            got = probe_in_netns([{"target": t, "tls": tls} for _, _, t, tls in jobs], ns, timeout)
        except HarmlessError as e:
            checks = [ControllerCheck(switch=n, bridge=f"br-of-{n}", target=t, stage="unchecked", reason=e.problem)
                      for _, n, t, _ in jobs]
            return checks, [Finding(severity="warning", kind="controller-unchecked", where=str(e.where),
                                    problem=f"controller reachability not checked: {e.problem}", fix=e.fix)]
        checks = [ControllerCheck(switch=n, bridge=f"br-of-{n}", target=t, **r)
                  for (_, n, t, _), r in zip(jobs, got)]
        found = _findings(inv, src, jobs, checks)
        if not any(f.severity == "refusal" for f in found) or time.monotonic() >= end:
            return checks, found
        if not told:
            progress(f"waiting up to {wait_s:g} s for a controller: " + "; ".join(
                f.problem for f in found if f.severity == "refusal"))
            told = True
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))


def _findings(inv: Inventory, src: str, jobs: list, checks: list[ControllerCheck]) -> list[Finding]:
    out = []
    ns = f" (from namespace {inv.server.netns})" if inv.server.netns else ""
    for i, sw in enumerate(inv.switches):
        mine = [(c, jobs[k][2]) for k, c in enumerate(checks) if c.switch == sw.name]
        if not mine:
            continue
        where = f"{src}: switches[{i}].openflow.controllers"
        bad = [c for c, _ in mine if not c.reachable]
        if len(bad) == len(mine):
            why = "; ".join(f"{c.target}: {c.reason}" for c in bad)
            out.append(Finding(severity="refusal", kind="controller-unreachable", where=where, switch=sw.name,
                               problem=f"no controller of {sw.bridge} is reachable{ns}: {why}",
                               fix="start the controller (or fix the address, port, firewall or TLS files) before "
                                   "up; up --no-wait skips this check and migrates without a controller"))
            continue
        for c in _not_ok(mine):
            out.append(Finding(severity="warning", kind="controller-partly-unreachable" if not c.reachable
                               else "controller-no-hello", where=where, switch=sw.name,
                               problem=f"{c.target} of {sw.bridge}{ns}: {c.reason}",
                               fix="check that controller; br-of works with the others"))
    return out


def _not_ok(mine: list) -> list[ControllerCheck]:
    """The checks of one br-of that are not ``ok``."""
    return [c for c, _ in mine if c.stage != "ok"]


def _main(argv: list[str]) -> int:
    """``python -m harmless.otc.reach [TIMEOUT]``: JSON jobs on stdin, JSON results on stdout (run in a netns)."""
    timeout = float(argv[0]) if argv else PROBE_TIMEOUT_S
    jobs = json.loads(sys.stdin.read() or "[]")
    print(json.dumps([probe(j["target"], j.get("tls"), timeout) for j in jobs]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
