"""netmiko line-wise fallback driver: for a device NAPALM cannot commit to.

What it does (and does not) do, honestly:
  * merge = ``send_config_set`` of the rendered lines; the diff is computed by us (dialect ``diff``) from the
    running config, so ``load_merge`` changes nothing on the device;
  * after every commit it re-reads the running config and checks the candidate is in effect (refused lines
    that the device reports only as output are caught twice);
  * rollback/restore = the dialect's line-wise ``transform`` from the running config to the saved one, then a
    byte-for-byte check; there is NO atomic replace and NO commit-confirm (``capabilities`` says so and
    ``commit(revert_in=...)`` raises NotImplementedError);
  * it refuses (before touching the device) any change to access/management lines (``username``, ``aaa``,
    ``line``, ``crypto``, ... per dialect), because a line-wise change there can lock us out half-way.

Inventory: ``driver: netmiko_cli`` with ``optional_args: {device_type: cisco_ios}`` (or ``hp_procurve``),
optional ``secret`` (enable secret; defaults to the password) and any netmiko ConnectHandler argument in
``netmiko_args``.
"""
from __future__ import annotations

import logging
import re
import time
from typing import Any

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import (AccessPortChange, Capabilities, DeviceFacts, SwitchDriver,
                                          TrunkChange)
from harmless.switch_drivers.models import parse_model
from harmless.switch_drivers.portmodel import with_management
from harmless.switch_drivers.netmiko_cli.dialects import Dialect, refused
from harmless.switch_drivers.netmiko_cli.registry import get_dialect

log = logging.getLogger(__name__)


class NetmikoCliDriver(SwitchDriver):
    """One switch driven line by line over SSH with netmiko.

    Args:
        host, port, username, password, timeout: see :class:`SwitchDriver`.
        optional_args: ``device_type`` (netmiko; default ``cisco_ios``), ``secret``, ``netmiko_args`` (dict
            passed to ``ConnectHandler``).

    Raises (every device method): DeviceError (unreachable, refused, lost session), CommitError (a line was
    refused or the result differs from the intent).
    """

    name = "netmiko_cli"
    default_device_type = "cisco_ios"

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        super().__init__(host, port, username, password, optional_args, timeout)
        device_type = self.optional_args.get("device_type", self.default_device_type)
        try:
            self.dialect: Dialect = get_dialect(device_type)
        except KeyError as exc:
            raise DeviceError(self.where, str(exc.args[0]), "use a supported device_type or another driver") from None
        if device_type == "hp_procurve":          # the port model reads ProCurve syntax, not IOS
            self.port_model_syntax = "procurve"
        self._conn: Any = None
        self._candidate: str | None = None
        self._before_commit: str | None = None
        self._current: str | None = None

    # ------------------------------------------------------------------ plumbing
    def _redact(self, text: str) -> str:
        for secret in {self._password, self.optional_args.get("secret")}:
            if secret:
                text = text.replace(str(secret), "***")
        return text

    def _c(self) -> Any:
        if self._conn is None:
            raise DeviceError(self.where, "not connected", "call open() first")
        return self._conn

    def _send(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (DeviceError, NotImplementedError):
            raise
        except Exception as exc:  # noqa: BLE001 - netmiko/paramiko raise many types
            first = (self._redact(str(exc)).strip().splitlines() or [""])[0]
            raise DeviceError(self.where, f"{what} failed ({type(exc).__name__}: {first})",
                              "check that the switch is reachable and the session is not in use") from None

    # ------------------------------------------------------------------ session
    def open(self) -> None:
        """Connect with netmiko (``device_type`` from the dialect) and enter enable mode.

        Raises:
            DeviceError: unreachable / login or enable refused (secrets redacted).
        """
        from netmiko import ConnectHandler

        args = {"device_type": self.dialect.device_type, "host": self.host, "port": self.port,
                "username": self.username, "password": self._password,
                "secret": self.optional_args.get("secret", self._password), "timeout": self.timeout,
                "conn_timeout": min(self.timeout, 15), "fast_cli": False}
        args.update(self.optional_args.get("netmiko_args", {}))
        t0 = time.monotonic()
        try:
            conn = ConnectHandler(**args)
            conn.enable()
        except Exception as exc:  # noqa: BLE001
            first = (self._redact(str(exc)).strip().splitlines() or [""])[0]
            raise DeviceError(self.where, f"cannot reach/log in to the switch ({type(exc).__name__}: {first})",
                              "check address, port, username, password and device_type") from None
        self._conn = conn
        log.info("netmiko_cli %s: connected (%s) in %.1f s", self.where, self.dialect.device_type,
                 time.monotonic() - t0)

    def close(self) -> None:
        """Disconnect (idempotent)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.disconnect()
            except Exception as exc:  # noqa: BLE001
                log.info("netmiko_cli %s: close: %s", self.where, self._redact(str(exc)))

    # ------------------------------------------------------------------ read
    @property
    def capabilities(self) -> Capabilities:
        """No commit-confirm, no atomic replace (restore is line-wise and verified), QinQ per dialect, no LAG, no
        Layer 2 protocol tunnelling (the dialect says why)."""
        return Capabilities(commit_confirm=False, replace=False, qinq=self.dialect.qinq,
                            stag_tpids=self.dialect.stag_tpids, lag=False, link_state=False, l2pt=(),
                            l2pt_source=self.dialect.l2pt_source)

    def running_config(self) -> str:
        """The running config without headers (dialect ``strip_running``); stable across calls."""
        raw = self._send("read running config", self._c().send_command, self.dialect.show_running,
                         read_timeout=self.timeout)
        return self.dialect.strip_running(raw)

    def facts(self) -> DeviceFacts:
        """Hostname (from the prompt), VLANs and per-port state parsed from the running config.

        ``model``/``os_version`` are empty (this fallback reads no version getter); ``interfaces`` are the
        ports named in the running config.
        """
        running = self.running_config()
        self._current = running
        prompt = self._send("find prompt", self._c().find_prompt).strip().rstrip("#>").strip()
        return self._facts_of(running, prompt)

    def _facts_of(self, running: str, hostname: str) -> DeviceFacts:
        """DeviceFacts of a running config: the dialect's per-port state and VLANs, the port model (its management
        SVI marked) for preflight, None when this OS has no model."""
        ports = self.dialect.port_states(running)
        model = None
        syntax = getattr(self, "port_model_syntax", None) or {"cisco_ios": "ios", "hp_procurve": "procurve"}.get(
            self.dialect.device_type)
        if syntax:
            try:
                model = with_management(parse_model(syntax, running), self.host)
            except NotImplementedError:                      # no model for this OS yet
                model = None
        return DeviceFacts(hostname=hostname, model="", os_version="", interfaces=tuple(ports),
                           vlans=self.dialect.vlans(running), ports=ports, port_model=model)

    def ports_of(self, config_text: str):
        """The dialect's per-port state of a config text (pure)."""
        return self.dialect.port_states(config_text)

    # ------------------------------------------------------------------ offline
    def load_saved(self, config_text: str) -> DeviceFacts:
        """See :meth:`SwitchDriver.load_saved`: the saved text (headers stripped like the device's output) stands
        for the running config the render and the diff use; the host name is the config's ``hostname``."""
        running = self.dialect.strip_running(config_text)
        self._current = running
        host = next((m.group(1) for ln in running.splitlines()
                     if (m := re.match(r'hostname\s+"?([^"]+?)"?\s*$', ln))), "")
        return self._facts_of(running, host)

    def saved_diff(self, running: str, candidate: str) -> str:
        """The dialect's diff, the same :meth:`load_merge` reports online."""
        return self.dialect.diff(self.dialect.strip_running(running), candidate)

    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """The dialect's render, with the running config read by the last :meth:`facts` as ``current``.

        Raises:
            ValueError: bad input, or QinQ asked of a dialect without it.
        """
        if any(a.qinq for a in access) and not self.dialect.qinq:
            raise ValueError(f"{self.dialect.device_type}: QinQ access ports are not supported by this driver")
        return self.dialect.render(access, trunks, self._current)

    # ------------------------------------------------------------------ candidate workflow
    def _check_protected(self, lines: list[str], what: str) -> None:
        bad = [ln.strip() for ln in lines
               if ln.strip().lower().removeprefix("no ").removeprefix("default ").startswith(self.dialect.protected)]
        if bad:
            raise CommitError(self.where, f"{what} would change access/management lines line-wise ({bad[0]!r}); "
                              "refusing (a half-applied change there can lock the session out)",
                              "change those lines by hand or use a driver with atomic replace")

    def load_merge(self, config: str) -> str:
        """Keep ``config`` as candidate; return the diff computed from the running config (device unchanged).

        Raises:
            CommitError: the candidate touches protected lines.
        """
        self._check_protected(config.splitlines(), "the candidate")
        self._candidate = config
        return self.dialect.diff(self.running_config(), config)

    def discard(self) -> None:
        """Forget the candidate (nothing was sent to the device)."""
        self._candidate = None

    def _push(self, what: str, lines: list[str]) -> None:
        lines = [ln for ln in lines if ln.strip() and ln.strip() not in ("!", "end")]
        out = self._send(what, self._c().send_config_set, lines, read_timeout=self.timeout)
        bad = refused(self.dialect, self._redact(out))
        if bad:
            raise CommitError(self.where, f"{what}: the device refused " + "; ".join(bad[:3]),
                              "fix or remove the refused line(s)")

    def commit(self, revert_in: int | None = None) -> None:
        """Send the candidate with ``send_config_set``; check the output and that the diff is now empty.

        Raises:
            NotImplementedError: ``revert_in`` given (no commit-confirm on a line-wise driver).
            CommitError: a refused line, or the running config does not show the candidate afterwards.
        """
        if revert_in is not None:
            raise NotImplementedError(f"{self.where}: netmiko_cli cannot commit-confirm (no device-side revert timer)")
        if self._candidate is None:
            raise CommitError(self.where, "nothing to commit", "call load_merge() first")
        candidate, self._candidate = self._candidate, None
        self._before_commit = self.running_config()
        self._push("commit", candidate.splitlines())
        left = self.dialect.diff(self.running_config(), candidate)
        if left:
            raise CommitError(self.where, "after the commit the device still differs from the candidate: "
                              + "; ".join(left.splitlines()[:3]), "check the device's messages for those lines")

    def rollback(self) -> None:
        """Undo the last commit: line-wise back to the running config saved just before it (verified)."""
        if self._before_commit is None:
            raise CommitError(self.where, "no commit to roll back", "")
        self.restore(self._before_commit)

    def restore(self, saved_config: str) -> str:
        """Make the running config equal ``saved_config`` line by line (dialect ``transform``), then verify.

        Not atomic: a failure half-way leaves a mixed config (the error says so and which line failed).

        Returns:
            The lines sent, newline-joined ('' when already equal).

        Raises:
            CommitError: protected lines would change (nothing sent), a line was refused, or the result
                still differs from ``saved_config``.
        """
        running = self.running_config()
        lines = self.dialect.transform(running, saved_config)
        if not lines:
            return ""
        self._check_protected(lines, "the restore")
        self._push("restore", lines)
        if self.running_config() != saved_config:
            left = self.dialect.transform(self.running_config(), saved_config)
            raise CommitError(self.where, "the line-wise restore did not re-establish the saved config "
                              f"(still to change: {'; '.join(left[:3])})", "restore the saved config by hand")
        log.info("netmiko_cli %s: restored the saved config (%d lines sent)", self.where, len(lines))
        return "\n".join(lines)


__all__ = ["NetmikoCliDriver"]
