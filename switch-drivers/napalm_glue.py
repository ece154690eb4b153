"""NAPALM glue shared by the IOS, EOS and Junos drivers (one place for sessions, secrets and error mapping).

:class:`NapalmDriver` implements every :class:`~harmless.switch_drivers.base.SwitchDriver` device method with
the NAPALM candidate workflow; a vendor sub-class sets :attr:`NapalmDriver.napalm_name`, renders its own
template, parses its own config text into per-port state (NAPALM has no getter for it) and summarises its
device's error text (:meth:`NapalmDriver.device_message`). Details that differ per OS are class attributes
(:attr:`NapalmDriver.config_rejected`, :attr:`~NapalmDriver.login_fix`, ...) or small hooks
(:meth:`~NapalmDriver.device_vlans`, :meth:`~NapalmDriver._abort_open`).

Secrets: the password (and any ``secret`` in ``optional_args``) never reaches a log line, an exception text or
``repr``; every message that comes from NAPALM, pyeapi, PyEZ, ncclient or paramiko goes through
:meth:`NapalmDriver._redact` first.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import DeviceFacts, PortVlanState, SwitchDriver
from harmless.switch_drivers.models import parse_model
from harmless.switch_drivers.portmodel import with_management

log = logging.getLogger(__name__)

#: NAPALM (and PyEZ) exception class names that mean "the device rejected the configuration".
CONFIG_REJECTED = ("MergeConfigException", "ReplaceConfigException", "CommitError", "CommitConfirmException",
                   "CommandErrorException", "ConfigLoadError", "CommandError", "RpcError", "ConfigInvalidException")


class NapalmDriver(SwitchDriver):
    """A switch reached through one NAPALM core driver.

    Args:
        host, port, username, password, timeout: see :class:`SwitchDriver`.
        optional_args: NAPALM ``optional_args`` merged over ``{"port": port}``.

    Raises (every device method): :class:`DeviceError` (unreachable, login refused, lost session, called
    before :meth:`open`), :class:`CommitError` (the device rejected a change).
    """

    #: NAPALM driver name (``napalm.get_network_driver`` argument)
    napalm_name: str = ""
    #: exception class names that mean "the device rejected the configuration" (→ CommitError)
    config_rejected: tuple[str, ...] = CONFIG_REJECTED
    #: the ``fix`` of the DeviceError raised when :meth:`open` fails
    login_fix: str = "check address, port, username and password"
    #: why ``commit(revert_in=...)`` is refused when ``capabilities.commit_confirm`` is False (``{name}``: driver)
    commit_confirm_missing: str = "{name} has no commit-confirm"
    #: what :meth:`restore` calls the replace in messages
    replace_label: str = "config replace"
    #: :meth:`restore` commits the replace even when the device reports no diff (else it discards it)
    commit_unchanged_replace: bool = False

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        super().__init__(host, port, username, password, optional_args, timeout)
        self._device: Any = None
        self._facts_config: str | None = None   # running config read by the last facts()

    # ------------------------------------------------------------------ vendor hooks
    def device_message(self, text: str) -> str:
        """The relevant part of a device error text, on one line (vendor drivers refine this)."""
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return "; ".join(lines[:3])

    def parse_ports(self, config_text: str) -> dict[str, PortVlanState]:
        """Per-port VLAN state from running-config text (pure; vendor drivers implement it)."""
        raise NotImplementedError

    def parse_vlans(self, config_text: str) -> dict[int, str]:
        """``{vid: name}`` from running-config text (pure; vendor drivers implement it)."""
        raise NotImplementedError

    def ports_of(self, config_text: str) -> dict[str, PortVlanState]:
        """:meth:`parse_ports` (the per-port state the running config text gives)."""
        return self.parse_ports(config_text)

    def device_vlans(self, config_text: str) -> dict[int, str]:
        """``{vid: name}`` for :meth:`facts`; default :meth:`parse_vlans` of the running config (a vendor driver
        may ask the device instead)."""
        return self.parse_vlans(config_text)

    def model_of(self, config_text: str):
        """The port model (:class:`~harmless.switch_drivers.portmodel.SwitchModel`) of ``config_text`` (the running
        config just read); None when this driver has none yet. Vendor drivers add ``show`` outputs."""
        try:
            return parse_model(getattr(self, "port_model_syntax", None) or self.name, config_text)
        except NotImplementedError:
            return None

    def port_model(self):
        """What every port is now: :meth:`model_of` the running config (read-only; ``harmless ports``).

        Raises:
            DeviceError: the device cannot be read.
            NotImplementedError: the driver has no port model.
        """
        model = self.model_of(self.running_config())
        if model is None:
            raise NotImplementedError(f"driver {self.name} has no port model")
        return with_management(model, self.host)

    def session_port(self, model) -> str | None:
        """The interface this management session arrives on, None when unknown (vendor hook)."""
        return None

    def _abort_open(self, dev: Any) -> None:
        """Release whatever a failed ``dev.open()`` left half-open (vendor hook; default nothing)."""

    def napalm_class(self):
        """The NAPALM driver class (tests may substitute NAPALM's ``mock`` driver here)."""
        from napalm import get_network_driver

        return get_network_driver(self.napalm_name)

    # ------------------------------------------------------------------ plumbing
    def _napalm_optional_args(self) -> dict:
        args: dict = {"port": self.port}
        args.update(self.optional_args)
        return args

    def _redact(self, text: str) -> str:
        """``text`` with the password and any ``secret``/``enable_password`` replaced by ``***``."""
        for secret in {self._password, self.optional_args.get("secret"), self.optional_args.get("enable_password")}:
            if secret:
                text = text.replace(str(secret), "***")
        return text

    def _reason(self, exc: BaseException) -> str:
        msg = self._redact(str(exc)).strip()
        first = msg.splitlines()[0].strip() if msg else ""
        return f"{type(exc).__name__}: {first}" if first else type(exc).__name__

    def _dev(self) -> Any:
        if self._device is None:
            raise DeviceError(self.where, "not connected", "call open() first")
        return self._device

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run one NAPALM call; map its failures to DeviceError / CommitError (redacted)."""
        try:
            return fn(*args, **kwargs)
        except (DeviceError, NotImplementedError):
            raise
        except Exception as exc:  # noqa: BLE001 - NAPALM and its transports raise many types
            if type(exc).__name__ in self.config_rejected:
                msg = self.device_message(self._redact(str(exc)))
                raise CommitError(self.where, f"{what} was rejected by the device: {msg}",
                                  "fix or remove the rejected line(s)") from None
            raise DeviceError(self.where, f"{what} failed ({self._reason(exc)})",
                              "check that the switch is reachable and the session is not in use") from None

    # ------------------------------------------------------------------ session
    def open(self) -> None:
        """Connect and log in.

        Raises:
            DeviceError: ``"<host>:<port>: cannot reach/log in to the switch (<reason>)"``; the reason is the
                exception class and first line with secrets redacted.
        """
        cls = self.napalm_class()
        dev = cls(self.host, self.username, self._password, timeout=self.timeout,
                  optional_args=self._napalm_optional_args())
        t0 = time.monotonic()
        try:
            dev.open()
        except Exception as exc:  # noqa: BLE001
            reason = self._reason(exc)
            self._abort_open(dev)
            log.warning("%s %s: open failed (%s)", self.name, self.where, reason)
            raise DeviceError(self.where, f"cannot reach/log in to the switch ({reason})", self.login_fix) from None
        self._device = dev
        log.info("%s %s: connected as %s in %.1f s", self.name, self.where, self.username, time.monotonic() - t0)

    def close(self) -> None:
        """Disconnect (idempotent; errors while closing are logged and ignored)."""
        dev, self._device = self._device, None
        if dev is not None:
            try:
                dev.close()
            except Exception as exc:  # noqa: BLE001
                log.info("%s %s: close: %s", self.name, self.where, self._reason(exc))

    # ------------------------------------------------------------------ read
    def running_config(self) -> str:
        """The running config as NAPALM's ``get_config(retrieve="running")`` returns it.

        Returns:
            The text; two calls on an unchanged device return identical strings.
        """
        return self._call("get running config", self._dev().get_config, retrieve="running")["running"]

    def port_states(self) -> dict[str, PortVlanState]:
        """Per-port VLAN state parsed from the running config alone (one ``get_config``; see
        :meth:`SwitchDriver.port_states`)."""
        return self.parse_ports(self.running_config())

    def facts(self) -> DeviceFacts:
        """Hostname, model, OS version, interfaces, VLANs and per-port VLAN state (read-only).

        Returns:
            DeviceFacts; ``ports`` are parsed from the running config (so they are reproducible from a saved
            config), ``vlans`` come from :meth:`device_vlans` (by default also the running config), interfaces
            from NAPALM ``get_facts``. The running config read stays in ``_facts_config`` for the render.
        """
        f = self._call("get_facts", self._dev().get_facts)
        text = self.running_config()
        self._facts_config = text
        model = self.model_of(text)
        model = with_management(model, self.host) if model is not None else None
        return DeviceFacts(hostname=f.get("hostname", ""), model=f.get("model", ""),
                           os_version=f.get("os_version", ""), interfaces=tuple(f.get("interface_list", ())),
                           vlans=self.device_vlans(text), ports=self.parse_ports(text), port_model=model,
                           session_port=self.session_port(model) if model is not None else None)

    # ------------------------------------------------------------------ offline
    def saved_hostname(self, config_text: str) -> str:
        """The host name a saved config gives itself (``hostname X``; '' when none). Vendor drivers refine it."""
        return next((ln.split()[1] for ln in config_text.splitlines()
                     if ln.startswith("hostname ") and len(ln.split()) > 1), "")

    def saved_vlans(self, config_text: str, model) -> dict[int, str]:
        """``{vid: name}`` a saved config says the device has (default :meth:`parse_vlans`; IOS adds its built-in
        VLANs and, as a VTP server/client, the VLANs the config references)."""
        return self.parse_vlans(config_text)

    def load_saved(self, config_text: str) -> DeviceFacts:
        """See :meth:`SwitchDriver.load_saved`: the port model of the saved config (its management SVI marked),
        per-port state and VLANs parsed from it, interfaces = the model's ports; the render then uses it."""
        model = parse_model(getattr(self, "port_model_syntax", None) or self.name, config_text)
        self._facts_config = config_text
        return DeviceFacts(hostname=self.saved_hostname(config_text), model="", os_version="",
                           interfaces=tuple(p.interface for p in model.ports),
                           vlans=self.saved_vlans(config_text, model), ports=self.parse_ports(config_text),
                           port_model=with_management(model, self.host))

    def link_states(self) -> dict[str, str]:
        """Operational state per interface (NAPALM ``get_interfaces``).

        Returns:
            ``{name: "up" | "down" | "admin-down"}`` for every interface the device lists.
        """
        return {name: p["link"] for name, p in self.port_properties().items()}

    def port_properties(self) -> dict[str, dict]:
        """Link state and speed per interface (NAPALM ``get_interfaces``: ``is_enabled``, ``is_up``, ``speed`` in
        Mbit/s, -1 or 0 when the device does not say).

        Returns:
            ``{name: {"link": "up" | "down" | "admin-down", "speed_mbps": float}}`` for every interface listed.
        """
        out = {}
        for name, i in self._call("get_interfaces", self._dev().get_interfaces).items():
            link = "admin-down" if not i.get("is_enabled", True) else ("up" if i.get("is_up") else "down")
            speed = i.get("speed", 0)
            out[name] = {"link": link, "speed_mbps": float(speed) if isinstance(speed, (int, float)) and speed > 0
                         else 0.0}
        return out

    def interface_counters(self) -> dict[str, dict[str, int]]:
        """Counters per interface (NAPALM ``get_interfaces_counters``; -1 = not reported by the device, left out).

        Returns:
            see :meth:`SwitchDriver.interface_counters`.
        """
        out = {}
        for name, c in self._call("get_interfaces_counters", self._dev().get_interfaces_counters).items():
            row = {}
            for d in ("rx", "tx"):
                pk = [c.get(f"{d}_{k}_packets", -1) for k in ("unicast", "multicast", "broadcast")]
                if all(v >= 0 for v in pk):
                    row[f"{d}_packets"] = sum(pk)
                if c.get(f"{d}_octets", -1) >= 0:
                    row[f"{d}_bytes"] = c[f"{d}_octets"]
                if c.get(f"{d}_discards", -1) >= 0:
                    row[f"{d}_dropped"] = c[f"{d}_discards"]
            out[name] = row
        return out

    # ------------------------------------------------------------------ candidate workflow
    def load_merge(self, config: str) -> str:
        """Load ``config`` as merge candidate and return the device's diff ('' when nothing changes).

        Raises:
            CommitError: the device rejected a line while loading (the candidate is discarded, the
                running config is untouched).
        """
        dev = self._dev()
        self._call("load merge candidate", dev.load_merge_candidate, config=config)
        return self._call("compare config", dev.compare_config) or ""

    def discard(self) -> None:
        """Drop a loaded candidate."""
        self._call("discard", self._dev().discard_config)

    def commit(self, revert_in: int | None = None) -> None:
        """Commit the loaded candidate; with ``revert_in`` seconds as commit-confirm.

        Raises:
            NotImplementedError: ``revert_in`` given but ``capabilities.commit_confirm`` is False.
            CommitError: the device rejected the candidate.
            DeviceError: the session was lost (the commit may or may not have happened: :meth:`apply`
                checks and restores).
        """
        dev = self._dev()
        if revert_in is not None:
            if not self.capabilities.commit_confirm:
                raise NotImplementedError(f"{self.where}: " + self.commit_confirm_missing.format(name=self.name))
            self._call(f"commit (confirm within {revert_in} s)", dev.commit_config, revert_in=revert_in)
        else:
            self._call("commit", dev.commit_config)

    def confirm(self) -> None:
        """Confirm a commit-confirm commit (CommitError when none is pending any more)."""
        self._call("confirm commit", self._dev().confirm_commit)

    def rollback(self) -> None:
        """Undo the last commit (NAPALM ``rollback``)."""
        self._call("rollback", self._dev().rollback)

    def restore(self, saved_config: str) -> str:
        """Replace the running config with ``saved_config`` (NAPALM ``load_replace_candidate`` + commit).

        Args:
            saved_config: a text from :meth:`running_config`.

        Returns:
            The diff the device reported before the replace ('' when already equal; then nothing is committed
            unless :attr:`commit_unchanged_replace`).

        Raises:
            CommitError: the device refused the replace.
        """
        dev = self._dev()
        self._call("load replace candidate", dev.load_replace_candidate, config=saved_config)
        diff = self._call("compare config", dev.compare_config) or ""
        if diff or self.commit_unchanged_replace:
            self._call(f"restore ({self.replace_label})", dev.commit_config)
        else:
            self._call("discard", dev.discard_config)
        log.info("%s %s: restored saved config (%d diff lines)", self.name, self.where, len(diff.splitlines()))
        return diff
