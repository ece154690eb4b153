"""The controller side of br-of: TLS material, Controller-row settings, waiting for a connection, diagnosis.

* **TLS** (``ssl:`` targets): OVS has one SSL configuration per ``ovs-vswitchd`` (the ``SSL`` table referenced by
  ``Open_vSwitch.ssl``, written by ``ovs-vsctl set-ssl PRIVKEY CERT CACERT``), so every switch of one deployment
  must name the same ``openflow.tls`` material (:func:`check_tls`). :func:`apply_tls` writes it and marks the row
  ``external_ids:harmless=tls`` so that a later deployment without TLS removes only what HARMLESS set.
* **Controller rows**: ``max_backoff`` (ms, OVS reconnect backoff ceiling; OVS's default is 8000, its minimum 1000)
  and ``inactivity_probe`` (ms, echo probe after this much idle time; OVS's default 5000, 0 disables) from
  ``openflow.max_backoff_ms``/``inactivity_probe_ms``, and ``connection_mode=out-of-band`` (see
  ``ovs-vswitchd.conf.db(5)``, table Controller). With ``max_backoff=1000`` OVS retries a lost controller every
  second, so a restarted controller is back within about one second of listening again.
* **Waiting** (:func:`wait_controllers`): ``harmless up`` polls ``Controller.is_connected`` until every br-of with
  controllers has at least one connected, or raises :class:`NoControllerError` naming the targets, OVS's
  ``status:last_error`` and the ``ovs-vswitchd`` log's TLS lines.

Open vSwitch 3.1 quirk (ofproto/connmgr.c, found while measuring reconnect times): the connection to an active
controller is created with a fixed 8 s backoff ceiling and 5 s probe (``rconn_create(5, 8, ...)``), and
``Controller.max_backoff``/``inactivity_probe`` reach it only when ovs-vswitchd reconfigures *while that controller
is connected* (``ofservice_reconfigure`` updates connected ``ofconn`` objects only; ``ofconn_create`` does not
apply them). The connection object outlives disconnections, so once applied the settings stay until the controller row
is recreated or ovs-vswitchd restarts. :func:`wait_controllers` therefore writes a marker into the connected rows'
``other_config`` (:func:`reconfigure_connected`) to make ovs-vswitchd reconfigure once they are connected. Before
the first connection OVS retries after 1, 2, 4, 8, 8, ... s whatever ``max_backoff`` says.
"""
from __future__ import annotations

import calendar
import os
import re
import stat
import time
from pathlib import Path

from harmless.errors import InputError, OvsError
from harmless.ovs import Ovs

#: ``external_ids:harmless`` value on the SSL row HARMLESS wrote (anything else there is the user's)
TLS_MARK = "tls"
#: ``ovs-vswitchd`` log modules whose lines explain a failed TLS connection (``stream_ssl``) or a lost one
TLS_LOG_MODULES = ("stream_ssl",)


class NoControllerError(OvsError):
    """No controller of some br-of connected within the wait (``harmless up --wait-controller``)."""


# ----------------------------------------------------------------------------- TLS
def _tls_tuple(tls) -> tuple[str, str, str] | None:
    return None if tls is None else (tls.private_key, tls.certificate, tls.ca_cert)


def check_tls(inv, src: str) -> tuple[str, str, str] | None:
    """The deployment's TLS material ``(private_key, certificate, ca_cert)`` (paths), or None; checked.

    Args:
        inv: the validated :class:`harmless.inventory.Inventory`.
        src: inventory file name for messages.

    Raises:
        InputError: an ``ssl:`` controller without ``openflow.tls``; two switches naming different TLS material
            (OVS has one SSL configuration per instance); a file missing or unreadable; the private key readable by
            group or others. Nothing has been changed when this is raised.
    """
    chosen: tuple[str, str, str] | None = None
    chosen_at = ""
    for i, sw in enumerate(inv.switches):
        w = f"{src}: switches[{i}].openflow"
        of = sw.openflow
        ssl = [t for t in of.controllers if t.startswith("ssl:")]
        if ssl and of.tls is None:
            raise InputError(f"{w}.controllers", f"{ssl[0]} is a TLS target but openflow.tls is not set",
                             "add openflow.tls {private_key, certificate, ca_cert} (see docs/controllers.md) "
                             "or use a tcp: target")
        t = _tls_tuple(of.tls)
        if t is None:
            continue
        if chosen is not None and t != chosen:
            raise InputError(f"{w}.tls", f"names other TLS files than {chosen_at} (Open vSwitch has one SSL "
                             "configuration per instance)", "give every switch the same openflow.tls files")
        chosen, chosen_at = t, f"switches[{i}].openflow.tls"
        for field, path in zip(("private_key", "certificate", "ca_cert"), t):
            p = Path(path).expanduser()
            try:
                mode = p.stat().st_mode
                with open(p, "rb"):
                    pass
            except OSError as e:
                raise InputError(f"{w}.tls.{field}", f"cannot read {p} ({e.strerror})",
                                 "point it at an existing PEM file (see docs/controllers.md, ovs-pki)") from None
            if field == "private_key" and mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise InputError(f"{w}.tls.private_key", f"{p} is readable by others (mode {oct(mode & 0o777)})",
                                 f"chmod 600 {p}")
    return chosen


def plan_tls(plan) -> tuple[str, str, str] | None:
    """The one TLS configuration the plan's switches ask for (None: none does). Pure.

    Raises:
        InputError: two switches of the plan ask for different material.
    """
    found = {sp.tls for sp in plan.switches if sp.tls}
    if len(found) > 1:
        raise InputError("openflow.tls", "switches name different TLS files (Open vSwitch has one SSL "
                         "configuration per instance)", "give every switch the same openflow.tls files")
    return next(iter(found), None)


def tls_commands(want: tuple[str, str, str] | None, current: dict | None) -> list[list[str]]:
    """ovs-vsctl commands that make the instance's SSL configuration ``want``. Pure.

    Args:
        want: ``(private_key, certificate, ca_cert)`` absolute paths, or None (no TLS wanted).
        current: the SSL row now (``{"private_key", "certificate", "ca_cert", "external_ids"}``) or None.

    Returns:
        ``[]`` when nothing changes; ``[["set-ssl", k, c, ca], ["set", "SSL", ".", "external_ids:harmless=tls"]]``
        to set it; ``[["del-ssl"]]`` when TLS is not wanted and the row is HARMLESS's. A row the user set (no mark)
        is replaced only when TLS is wanted, never deleted.
    """
    if want is None:
        if current and current.get("external_ids", {}).get("harmless") == TLS_MARK:
            return [["del-ssl"]]
        return []
    if current and (current.get("private_key"), current.get("certificate"), current.get("ca_cert")) == want \
            and current.get("external_ids", {}).get("harmless") == TLS_MARK:
        return []
    return [["set-ssl", *want], ["set", "SSL", ".", f"external_ids:harmless={TLS_MARK}"]]


def current_ssl(ovs: Ovs) -> dict | None:
    """The instance's SSL row (``private_key``, ``certificate``, ``ca_cert``, ``external_ids``) or None."""
    rows = ovs.vsctl_json("SSL", columns=["private_key", "certificate", "ca_cert", "external_ids"])
    return rows[0] if rows else None


def apply_tls(ovs: Ovs, plan) -> tuple[str, str, str] | None:
    """Converge the instance's SSL configuration to the plan (idempotent); return the material in use or None.

    Raises:
        InputError: the plan's switches disagree, or a file is missing (checked again here because the plan may
            come from a saved state).
        OvsError: ovs-vsctl failed.
    """
    want = plan_tls(plan)
    if want is not None:
        want = tuple(str(Path(p).expanduser().resolve()) for p in want)
        for p in want:
            if not os.access(p, os.R_OK):
                raise InputError("openflow.tls", f"cannot read {p}", "point openflow.tls at existing PEM files")
    ovs.transact(tls_commands(want, current_ssl(ovs)))
    return want


# ----------------------------------------------------------------------------- Controller rows
def controller_rows(ovs: Ovs, bridge: str) -> list[dict]:
    """The Controller rows of ``bridge``.

    Returns:
        ``[{"uuid", "target", "is_connected": bool, "role", "state", "last_error", "sec_since_connect",
        "sec_since_disconnect", "max_backoff", "inactivity_probe"}]`` (strings from ``Controller.status``; absent
        keys are None).
    """
    uuids = ovs.vsctl("get", "Bridge", bridge, "controller").strip().strip("[]").replace(" ", "")
    out = []
    for u in filter(None, uuids.split(",")):
        r = ovs.vsctl_json("Controller", u, columns=["target", "is_connected", "role", "status", "max_backoff",
                                                      "inactivity_probe"])[0]
        status = r["status"] or {}
        out.append({"uuid": u, "target": r["target"], "is_connected": bool(r["is_connected"]),
                    "role": r["role"] or "-", "state": status.get("state", "-"),
                    "last_error": status.get("last_error"), "sec_since_connect": status.get("sec_since_connect"),
                    "sec_since_disconnect": status.get("sec_since_disconnect"),
                    "max_backoff": r["max_backoff"] if r["max_backoff"] != [] else None,
                    "inactivity_probe": r["inactivity_probe"] if r["inactivity_probe"] != [] else None})
    return out


def settings_commands(rows: list[dict], max_backoff_ms: int, inactivity_probe_ms: int) -> list[list[str]]:
    """ovs-vsctl ``set Controller`` commands giving every row the settings (and out-of-band). Pure.

    Args:
        rows: :func:`controller_rows` of one bridge (``uuid`` is used).
        max_backoff_ms: Controller.max_backoff (ms, >= 1000).
        inactivity_probe_ms: Controller.inactivity_probe (ms, 0 = off).
    """
    return [["set", "Controller", r["uuid"], "connection_mode=out-of-band", f"max_backoff={max_backoff_ms}",
             f"inactivity_probe={inactivity_probe_ms}"] for r in rows]


def apply_settings(ovs: Ovs, plan) -> None:
    """Write each br-of's ``max_backoff``/``inactivity_probe``/out-of-band onto its Controller rows (one txn)."""
    ovs.transact([c for sp in plan.switches if sp.live_controllers
                  for c in settings_commands(controller_rows(ovs, sp.bridge), sp.max_backoff_ms,
                                             sp.inactivity_probe_ms)])


def reconfigure_connected(ovs: Ovs, uuids: list[str]) -> None:
    """Make ovs-vswitchd apply ``max_backoff``/``inactivity_probe`` to these connected controllers (see the module
    doc: OVS 3.1 applies them only on a reconfiguration while connected) by writing
    ``other_config:harmless-reconfigured=<epoch ms>`` (a column ovs-vswitchd monitors; the key itself is ignored)."""
    stamp = str(time.time_ns() // 1_000_000)
    ovs.transact([["set", "Controller", u, f"other_config:harmless-reconfigured={stamp}"] for u in uuids])


# ----------------------------------------------------------------------------- diagnosis
def tls_log_lines(ovs: Ovs, limit: int = 3, since: float | None = None) -> list[str]:
    """The last ``limit`` ``ovs-vswitchd`` log lines of the TLS layer (``stream_ssl``: handshake and certificate
    errors), newest last; only lines written since this daemon's last start and, with ``since`` (epoch s), not
    older than that. Empty when the log cannot be read."""
    lines = [ln for ln in _vswitchd_log(ovs) if any(f"|{m}|" in ln for m in TLS_LOG_MODULES)]
    if since is not None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(since))
        lines = [ln for ln in lines if ln[:19] >= stamp]
    return lines[-limit:]


#: how much of the end of the ``ovs-vswitchd`` log is read for diagnosis (bytes)
LOG_TAIL_BYTES = 256 * 1024


def _vswitchd_log(ovs: Ovs) -> list[str]:
    """Lines of the instance's ``ovs-vswitchd`` log since the daemon's last start, within the last
    :data:`LOG_TAIL_BYTES` ([] when unreadable)."""
    try:
        with open(ovs.logdir / "ovs-vswitchd.log", "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - LOG_TAIL_BYTES))
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    return (text[text.rfind("opened log file"):] if "opened log file" in text else text).splitlines()


def connected_since(ovs: Ovs, bridge: str, since: float) -> float | None:
    """When (epoch s) ``ovs-vswitchd`` logged ``bridge``'s first controller connection at or after ``since`` (its
    ``rconn|INFO|<bridge><->TARGET: connected`` line; the log's UTC ms timestamps), None when not (yet). The log is
    the moment the TCP/TLS connection came up, without the Controller table's status-refresh lag."""
    for line in _vswitchd_log(ovs):
        if "|rconn|" not in line or f"|{bridge}<->" not in line or not line.rstrip().endswith(": connected"):
            continue
        try:
            t = calendar.timegm(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + line[19:23])
        except ValueError:
            continue
        if t >= since:
            return t
    return None


def rconn_error(ovs: Ovs, bridge: str, target: str) -> str | None:
    """The last connection error the ``ovs-vswitchd`` log gives for ``bridge``'s connection to ``target``
    (``rconn|WARN|<bridge><-><target>: connection failed (Connection refused)`` -> ``Connection refused``), or None.
    OVS writes ``Controller.status:last_error`` only every few seconds; the log has it at once."""
    key = f"{bridge}<->{target}: connection "
    for ln in reversed(_vswitchd_log(ovs)):
        i = ln.find(key)
        if i >= 0 and "|rconn|" in ln and "(" in ln[i:]:
            return ln[i:].split("(", 1)[1].rsplit(")", 1)[0]
    return None


def why_not_connected(ovs: Ovs, rows: list[dict], since: float | None = None, bridge: str | None = None) -> str:
    """One phrase explaining unconnected controllers: OVS's ``last_error`` per target (from the log when the
    Controller row has none yet) and, for ``ssl:`` targets, the last TLS log line (e.g. ``certificate verify
    failed``)."""
    parts = []
    for r in rows:
        if r["is_connected"]:
            continue
        err = r["last_error"] or (rconn_error(ovs, bridge, r["target"]) if bridge else None)
        parts.append(f"{r['target']}: {err or r['state'] or 'no answer'}")
    if any(r["target"].startswith("ssl:") and not r["is_connected"] for r in rows):
        line = telling_tls_line(tls_log_lines(ovs, TLS_LINES_READ, since))
        if line:
            parts.append("TLS: " + line.split("|", 4)[-1].strip())
    return "; ".join(parts)


#: how many recent TLS log lines :func:`why_not_connected` looks through for the reason
TLS_LINES_READ = 20
#: words of a TLS log line that says *why* a handshake failed (a certificate, the peer's alert), as opposed to the
#: transport errors around it (``SSL_write: system error (Connection reset by peer)``, written when the peer closes
#: after its alert, sometimes after the alert's own line)
TLS_REASON = re.compile(r"certificate|alert|verify|unknown ca|handshake", re.I)


def telling_tls_line(lines: list[str]) -> str | None:
    """The newest of ``lines`` (TLS log lines, oldest first) that names a reason (:data:`TLS_REASON`), else the
    newest line, or None for no lines. Pure."""
    return next((ln for ln in reversed(lines) if TLS_REASON.search(ln.split("|", 4)[-1])), lines[-1] if lines else None)


# ----------------------------------------------------------------------------- waiting
def wait_controllers(ovs: Ovs, plan, timeout: float, poll: float = 0.2,
                     progress=lambda m: None) -> dict[str, list[str]]:
    """Wait until every br-of of ``plan`` that has controllers has at least one connected (``is_connected``).

    Args:
        ovs: the server's OVS.
        plan: the deployed :class:`harmless.plan.Plan`.
        timeout: seconds to wait in total (> 0).
        poll: seconds between polls of the Controller table.
        progress: one-line progress callback.

    Returns:
        ``{bridge: [connected targets]}`` for every br-of with controllers (bridges without controllers are left
        out: they stay fail-secure with no flows, nothing to wait for). The connected rows then get
        :func:`reconfigure_connected`, so that their backoff and probe settings take effect.

    Raises:
        NoControllerError: some br-of had no connected controller after ``timeout`` s; the message names the
            bridge, its targets, OVS's last error per target (and the TLS log line for ``ssl:``) and the fix.
    """
    start_wall = time.time()
    end = time.monotonic() + timeout
    todo = [sp for sp in plan.switches if sp.live_controllers]
    if todo:
        progress(f"waiting up to {timeout:g} s for a controller on " + ", ".join(sp.bridge for sp in todo))
    while True:
        rows = {sp.bridge: controller_rows(ovs, sp.bridge) for sp in todo}
        connected = {br: [r["target"] for r in rs if r["is_connected"]] for br, rs in rows.items()}
        missing = [br for br, c in connected.items() if not c]
        if not missing:
            reconfigure_connected(ovs, [r["uuid"] for rs in rows.values() for r in rs if r["is_connected"]])
            return connected
        if time.monotonic() >= end:
            br = missing[0]
            targets = ", ".join(r["target"] for r in rows[br])
            more = f" (and {len(missing) - 1} more bridge(s))" if len(missing) > 1 else ""
            raise NoControllerError(
                br, f"no controller connected within {timeout:g} s to {targets}{more}"
                    + (f" ({why_not_connected(ovs, rows[br], start_wall, br)})" if rows[br] else ""),
                "start the controller and check that it listens on that address and port (firewall, "
                "ssl:/tcp:, TLS files), or run up with --no-wait")
        time.sleep(poll)


def wait_after_up(ovs: Ovs, plan, timeout: float, keep: bool, progress=lambda m: None
                  ) -> tuple[dict[str, list[str]], str | None]:
    """``harmless up``'s wait (one call after verification): :func:`wait_controllers` unless ``timeout`` is 0.

    Args:
        timeout: seconds (``--wait-controller``; 0 = ``--no-wait``: returns ``({}, None)`` at once).
        keep: ``--keep-on-no-controller``: a timeout is returned as the message instead of raised.

    Returns:
        ``(connected, missing)``: ``{bridge: [connected targets]}`` and None, or ``({}, message)`` when nobody
        connected in time and ``keep`` is set.

    Raises:
        NoControllerError: nobody connected in time and ``keep`` is not set (``up`` then rolls back).
    """
    if timeout <= 0:
        return {}, None
    try:
        return wait_controllers(ovs, plan, timeout, progress=progress), None
    except NoControllerError as e:
        if not keep:
            raise
        progress(f"keeping the deployment without a controller: {e}")
        return {}, str(e)
