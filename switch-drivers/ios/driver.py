"""Cisco IOS driver: NAPALM ``ios`` + a jinja2 template + running-config parsing.

Typical use (the orchestrator's)::

    with IosDriver("10.0.0.2", 22, "admin", password) as dev:
        facts = dev.facts()
        diff = dev.apply(dev.render(access, trunks))   # exact original config or CommitError
        ...
        dev.restore(saved)                              # `harmless down`

The password (and the enable secret) never appear in logs, exception text or ``repr``: every message
that comes from NAPALM/netmiko/paramiko goes through :meth:`IosDriver._redact` first.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import (AccessPortChange, Capabilities, DeviceFacts, SwitchDriver,
                                          TrunkChange)
from harmless.switch_drivers.ios.hazards import replace_bridge
from harmless.switch_drivers.ios.parse import (interface_lines, needs_trunk_encapsulation, parse_port_states,
                                                parse_vlans)
from harmless.switch_drivers.ios.render import render_config

log = logging.getLogger(__name__)

#: NAPALM exceptions that mean "the device rejected the configuration".
_CONFIG_REJECTED = ("MergeConfigException", "ReplaceConfigException", "CommitError",
                    "CommitConfirmException", "CommandErrorException")


def device_message(text: str, max_lines: int = 3) -> str:
    """The relevant part of an IOS error output, on one line.

    IOS reports a rejected line as the line, a ``^`` marker line and ``% Invalid input ...``; this
    keeps the offending line(s) with their ``%`` message and drops prompts and progress noise.

    Args:
        text: NAPALM exception text or raw device output.
        max_lines: at most this many errors are kept.

    Returns:
        e.g. ``"spanning-tree portfast: % Invalid input detected at '^' marker."``; the first non-empty
        line of ``text`` when it has no ``%`` error line; ``""`` for empty text.
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    found: list[str] = []
    for i, line in enumerate(lines):
        if not line.startswith("%"):
            continue
        j = i - 1
        while j >= 0 and set(lines[j]) <= {"^", " "}:
            j -= 1
        cmd = lines[j] if j >= 0 and not lines[j].startswith("%") and j < i - 1 else ""
        found.append(f"{cmd}: {line}" if cmd else line)
        if len(found) >= max_lines:
            break
    if found:
        return "; ".join(found)
    return lines[0] if lines else ""


def unapplied(candidate: str, running: str) -> list[str]:
    """What a merged ``candidate`` asked for that ``running`` does not show (pure).

    Checks the port modes, access VIDs and trunk allowed VIDs of every interface the candidate sets, and its
    ``vlan N`` blocks. Catches lines IOS refused with ``Command rejected`` during ``copy ... running-config``,
    which NAPALM does not detect (napalm-automation/napalm#1481).

    Returns:
        Human-readable mismatches such as ``"FastEthernet0/7 mode trunk (device: access)"``; [] when all applied.
    """
    want, have = parse_port_states(candidate), parse_port_states(running)
    sets_mode = {name for name, lines in interface_lines(candidate).items()
                 if any(ln.startswith("switchport mode ") for ln in lines)}
    out = []
    for name, w in want.items():
        if name not in sets_mode:
            continue
        h = have.get(name)
        if h is None:
            out.append(f"{name} (not on the device)")
            continue
        if w.mode != h.mode:
            out.append(f"{name} mode {w.mode} (device: {h.mode})")
        elif w.mode == "trunk" and w.allowed_vids != h.allowed_vids and w.allowed_vids is not None:
            out.append(f"{name} allowed VLANs (device: {h.allowed_vids})")
        elif w.mode != "trunk" and w.access_vid != h.access_vid:
            out.append(f"{name} access VLAN {w.access_vid} (device: {h.access_vid})")
    vlans = parse_vlans(running)
    out += [f"vlan {vid}" for vid in parse_vlans(candidate) if vid not in vlans]
    return out


class IosDriver(SwitchDriver):
    """One Cisco IOS switch over SSH (NAPALM ``ios``).

    Args:
        host, port, username, password, timeout: see :class:`SwitchDriver`.
        optional_args: NAPALM ``optional_args`` merged over the defaults ``{"port": port,
            "secret": password}`` (the enable secret is the password unless ``secret`` is given).
            For the lab: ``{"inline_transfer": True, "dest_file_system": "flash:"}``.

    Raises (every device method): :class:`DeviceError` (unreachable, login refused, lost session,
    called before :meth:`open`), :class:`CommitError` (the device rejected a change).
    """

    name = "ios"

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        super().__init__(host, port, username, password, optional_args, timeout)
        self._device: Any = None
        self._caps: Capabilities | None = None
        #: running config read by the last facts() (the render's ``current``: conversion-hazard cleanup)
        self._current: str | None = None
        #: trunk encapsulation line needed (ISL-capable platform), decided by facts()
        self._encapsulation = False
        self._candidate: str | None = None

    # ------------------------------------------------------------------ plumbing
    def _napalm_optional_args(self) -> dict:
        args = {"port": self.port, "secret": self._password}
        args.update(self.optional_args)
        return args

    def _redact(self, text: str) -> str:
        """``text`` with the password and enable secret replaced by ``***``."""
        for secret in {self._password, self.optional_args.get("secret")}:
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
        except Exception as exc:  # noqa: BLE001 - NAPALM/netmiko/paramiko raise many types
            if type(exc).__name__ in _CONFIG_REJECTED:
                msg = device_message(self._redact(str(exc)))
                raise CommitError(self.where, f"{what} was rejected by the device: {msg}",
                                  "fix or remove the rejected line(s)") from None
            raise DeviceError(self.where, f"{what} failed ({self._reason(exc)})",
                              "check that the switch is reachable and the session is not in use") from None

    # ------------------------------------------------------------------ session
    def open(self) -> None:
        """Connect over SSH and enter enable mode.

        Raises:
            DeviceError: ``"<host>:<port>: cannot reach/log in to the switch (<reason>)"``; the reason
                is the exception class and first line with secrets redacted.
        """
        from napalm import get_network_driver

        cls = get_network_driver("ios")
        dev = cls(self.host, self.username, self._password, timeout=self.timeout,
                  optional_args=self._napalm_optional_args())
        t0 = time.monotonic()
        try:
            dev.open()
        except Exception as exc:  # noqa: BLE001
            reason = self._reason(exc)
            half_open = getattr(dev, "_netmiko_device", None)   # e.g. login OK but `enable` refused
            if half_open is not None:
                try:
                    half_open.disconnect()
                except Exception:  # noqa: BLE001
                    pass
            log.warning("ios %s: open failed (%s)", self.where, reason)
            raise DeviceError(self.where, f"cannot reach/log in to the switch ({reason})",
                              "check address, port, username, password and enable secret") from None
        self._device = dev
        log.info("ios %s: connected as %s in %.1f s", self.where, self.username, time.monotonic() - t0)

    def close(self) -> None:
        """Disconnect (idempotent; errors while closing are logged and ignored)."""
        dev, self._device = self._device, None
        if dev is not None:
            try:
                dev.close()
            except Exception as exc:  # noqa: BLE001
                log.info("ios %s: close: %s", self.where, self._reason(exc))

    # ------------------------------------------------------------------ read
    @property
    def capabilities(self) -> Capabilities:
        """Probe ``show archive`` once: commit-confirm needs IOS's archive feature.

        Always: replace (``configure replace``), QinQ (``switchport mode dot1q-tunnel``; the outer tag's TPID
        is 0x8100 on IOS, hence ``stag_tpids=(0x8100,)``), link state (``get_interfaces``). No LAG support
        in the template.

        Raises:
            DeviceError: not open, or the probe failed.
        """
        if self._caps is None:
            out = self._call("show archive", self._dev().cli, ["show archive"])["show archive"]
            archive = bool(out.strip()) and "not enabled" not in out and "Invalid input" not in out
            self._caps = Capabilities(commit_confirm=archive, replace=True, qinq=True, lag=False,
                                      stag_tpids=(0x8100,), link_state=True)
        return self._caps

    def running_config(self) -> str:
        """``show running-config`` as NAPALM returns it (header lines removed, stripped).

        Returns:
            The text; two calls on an unchanged device return identical strings.
        """
        return self._call("get running config", self._dev().get_config, retrieve="running")["running"]

    def facts(self) -> DeviceFacts:
        """Hostname, model, OS version, interfaces, VLANs and per-port VLAN state (read-only).

        Returns:
            DeviceFacts; ``ports`` holds the layer-2 ports parsed from the running config (config parsing,
            reproducible from a saved config). Also remembers, for :meth:`render`, that running config and
            whether trunks need ``switchport trunk encapsulation dot1q`` (from ``show interfaces switchport``:
            "Administrative Trunking Encapsulation: negotiate" = ISL-capable; model name as fallback).
        """
        dev = self._dev()
        f = self._call("get_facts", dev.get_facts)
        vlans = self._call("get_vlans", dev.get_vlans)
        running = self.running_config()
        ports = parse_port_states(running)
        switchport = self._call("show interfaces switchport", dev.cli,
                                ["show interfaces switchport"])["show interfaces switchport"]
        self._current = running
        self._encapsulation = needs_trunk_encapsulation(
            None if "Invalid input" in switchport else switchport, f.get("model", ""))
        return DeviceFacts(hostname=f.get("hostname", ""), model=f.get("model", ""),
                           os_version=f.get("os_version", ""),
                           interfaces=tuple(f.get("interface_list", ())),
                           vlans={int(vid): v.get("name", "") for vid, v in vlans.items()},
                           ports=ports)

    def link_states(self) -> dict[str, str]:
        """Operational state per interface (NAPALM ``get_interfaces``).

        Returns:
            ``{name: "up" | "down" | "admin-down"}`` for every interface the device lists.
        """
        out = {}
        for name, i in self._call("get_interfaces", self._dev().get_interfaces).items():
            out[name] = "admin-down" if not i.get("is_enabled", True) else ("up" if i.get("is_up") else "down")
        return out

    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Render ``templates/harmless.j2`` (see :func:`render.render_config`).

        Uses what the last :meth:`facts` read (no device access here): the running config, for the
        conversion-hazard cleanup lines, and the trunk-encapsulation decision. Before any ``facts()`` it
        renders without cleanup and without the encapsulation line.
        """
        return render_config(access, trunks, current=self._current, trunk_encapsulation=self._encapsulation)

    # ------------------------------------------------------------------ candidate workflow
    def load_merge(self, config: str) -> str:
        """Load ``config`` as merge candidate and return the device's diff ('' when nothing changes).

        Raises:
            CommitError: the candidate could not be transferred/compared.
        """
        dev = self._dev()
        self._call("load merge candidate", dev.load_merge_candidate, config=config)
        self._candidate = config
        return self._call("compare config", dev.compare_config)

    def discard(self) -> None:
        """Drop a loaded candidate."""
        self._call("discard", self._dev().discard_config)

    def commit(self, revert_in: int | None = None) -> None:
        """Commit the loaded candidate (IOS: copy to running-config / configure replace, then write mem).

        Args:
            revert_in: seconds (60..7200, whole minutes) for commit-confirm; needs
                ``capabilities.commit_confirm`` (the IOS archive feature).

        Raises:
            NotImplementedError: ``revert_in`` given but the device has no archive feature.
            CommitError: the device rejected the candidate (NAPALM has already tried its rollback;
                use :meth:`apply` for a verified restore).
        """
        dev = self._dev()
        if revert_in is not None:
            if not self.capabilities.commit_confirm:
                raise NotImplementedError(
                    f"{self.where}: commit-confirm needs the IOS 'archive' feature, which is not enabled")
            self._call("commit (confirm in %ss)" % revert_in, dev.commit_config, revert_in=revert_in)
        else:
            self._call("commit", dev.commit_config)
        candidate, self._candidate = self._candidate, None
        if candidate:
            missing = unapplied(candidate, self.running_config())
            if missing:
                raise CommitError(self.where, "the device did not apply " + "; ".join(missing[:3])
                                  + " (IOS refused a line with 'Command rejected', which a merge does not report)",
                                  "check the port's mode/nonegotiate/encapsulation lines on the device")

    def confirm(self) -> None:
        """Confirm a commit-confirm commit."""
        self._call("confirm commit", self._dev().confirm_commit)

    def rollback(self) -> None:
        """Undo the last commit (IOS: ``configure replace`` of NAPALM's rollback file)."""
        self._call("rollback", self._dev().rollback)

    def restore(self, saved_config: str) -> str:
        """Replace the running config with ``saved_config`` (``configure replace``).

        Args:
            saved_config: a text from :meth:`running_config`.

        Returns:
            The diff the device reported before the replace ('' when already equal). The replace is
            committed even then, so the running config text is re-established exactly.

        A port that changes ``switchport mode`` is first moved to its saved mode by a small line-wise merge
        (:func:`hazards.replace_bridge`), because IOS's replace cannot change the mode of a
        ``switchport nonegotiate`` port (or drop the encapsulation of a trunk) and would abort.

        Raises:
            CommitError: the device refused the replace.
        """
        dev = self._dev()
        bridge = replace_bridge(self.running_config(), saved_config)
        if bridge:                                   # see hazards.py: nonegotiate / encapsulation ports
            lines = [ln for ln in bridge.splitlines() if ln.strip() not in ("!", "end")]
            out = self._call("pre-replace mode changes", dev.device.send_config_set, lines)
            if "Command rejected" in out or "Invalid input" in out:
                raise CommitError(self.where, "pre-replace mode changes were refused: "
                                  + device_message(self._redact(out)), "restore the saved config by hand")
            log.info("ios %s: set %d port mode(s) before configure replace", self.where, bridge.count("interface "))
        self._call("load replace candidate", dev.load_replace_candidate, config=saved_config)
        diff = self._call("compare config", dev.compare_config)
        self._call("restore (configure replace)", dev.commit_config)
        log.info("ios %s: restored saved config (%d diff lines)", self.where, len(diff.splitlines()))
        return diff


__all__ = ["IosDriver", "device_message", "unapplied"]
