"""Cisco IOS driver: NAPALM ``ios`` + a jinja2 template + running-config parsing.

Typical use (the orchestrator's)::

    with IosDriver("10.0.0.2", 22, "admin", password) as dev:
        facts = dev.facts()
        diff = dev.apply(dev.render(access, trunks))   # exact original config or CommitError
        ...
        dev.restore(saved)                              # `harmless down`

Sessions, secrets and error mapping are :class:`~harmless.switch_drivers.napalm_glue.NapalmDriver`'s (the password
and the enable secret never appear in logs, exception text or ``repr``); this module adds what IOS needs on top:
the enable secret, the ``show archive`` probe for commit-confirm, the trunk-encapsulation decision, the check that a
merge really applied (:func:`unapplied`) and the mode bridge before ``configure replace``
(:func:`hazards.replace_bridge`).
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import AccessPortChange, Capabilities, DeviceFacts, TrunkChange
from harmless.switch_drivers.ciscomodel import l2pt_of_lines
from harmless.switch_drivers.ios import files
from harmless.switch_drivers.ios.hazards import replace_bridge
from harmless.switch_drivers.ios.model import parse_model
from harmless.switch_drivers.ios.platforms import TUNNEL_MAC, l2pt_support
from harmless.switch_drivers.ios.parse import (interface_lines, needs_trunk_encapsulation, parse_port_states,
                                                parse_vlans)
from harmless.switch_drivers.ios.render import render_config, render_port_admin
from harmless.switch_drivers.napalm_glue import NapalmDriver
from harmless.switch_drivers.rendering import OWN_VLAN_PREFIX

log = logging.getLogger(__name__)

#: VLANs ``show vlan`` lists on every IOS switch besides the configured ones (what NAPALM get_vlans returns online)
IOS_DEFAULT_VLANS = {1: "default", 1002: "fddi-default", 1003: "token-ring-default", 1004: "fddinet-default",
                     1005: "trnet-default"}

#: NAPALM ios exceptions that mean "the device rejected the configuration".
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


def unapplied(candidate: str, running: str, device_vlans: Iterable[int] | None = None) -> list[str]:
    """What a merged ``candidate`` asked for that the device does not show (pure).

    Compares intent with the re-read port model (:mod:`.model`), not text: the mode, access VID, trunk allowed
    VIDs and tunnelled link-local protocols (``l2protocol-tunnel``, added and removed) of every interface the
    candidate sets a ``switchport mode`` on, and its ``vlan`` blocks. VLANs are
    checked against ``device_vlans`` (``show vlan``, NAPALM ``get_vlans``) when given, because a VTP server keeps
    VLANs 1-1005 in vlan.dat and out of the running config; else against the running config's model. Catches
    lines IOS refused with ``Command rejected`` during ``copy ... running-config``, which NAPALM does not detect
    (napalm-automation/napalm#1481).

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
        else:
            out += _l2pt_unapplied(name, interface_lines(candidate)[name], interface_lines(running).get(name, []))
    vlans = set(device_vlans) if device_vlans is not None else set(parse_vlans(running))
    out += [f"vlan {vid}" for vid in parse_vlans(candidate) if vid not in vlans]
    return out


def _l2pt_unapplied(name: str, want: list[str], have: list[str]) -> list[str]:
    """Tunnelling the candidate's lines for ``name`` ask for (or remove) that the device's lines do not show."""
    now = set(l2pt_of_lines(have))
    add = [p for p in l2pt_of_lines(want) if p not in now]
    drop = [p for p in l2pt_of_lines(ln[3:] for ln in want if ln.startswith("no ")) if p in now
            and p not in l2pt_of_lines(want)]
    return ([f"{name} l2protocol-tunnel {p} (device: not tunnelled)" for p in add]
            + [f"{name} no l2protocol-tunnel {p} (device: still tunnelled)" for p in drop])


def _full_name(short: str, names: Iterable[str]) -> str | None:
    """``Gi0/2`` -> ``GigabitEthernet0/2`` among ``names`` (same letters prefix, same numbers)."""
    m = re.match(r"([A-Za-z-]+)([\d/.:]+)$", short.strip())
    if not m:
        return None
    for n in names:
        k = re.match(r"([A-Za-z-]+)([\d/.:]+)$", n)
        if k and k.group(2) == m.group(2) and k.group(1).lower().startswith(m.group(1).lower()):
            return n
    return None


def session_port_of(show_users: str, show_arp: Callable[[str], str], show_mac: Callable[[str], str],
                    interfaces: Iterable[str], gateway: str | None = None) -> str | None:
    """The interface this SSH session arrives on, from ``show users`` → ``show ip arp IP`` → ``show mac
    address-table address MAC`` (ntc-templates; pure given the three outputs).

    Args:
        show_users: ``show users`` output (our line is marked ``*``; its Location is the peer address).
        show_arp: ``ip -> show ip arp <ip>`` output.
        show_mac: ``mac -> show mac address-table address <mac>`` output.
        interfaces: the device's interface names (to expand ``Gi0/2``).
        gateway: the switch's default gateway; when the session's source has no ARP entry (it is not on a local
            subnet) the session arrives through the gateway, so the gateway's MAC is looked up instead.

    Returns:
        The full interface name, or None when any step gives nothing (console, no ARP entry, peer off-link).
    """
    from ntc_templates.parse import parse_output

    names = list(interfaces)
    try:
        me = [r for r in parse_output(platform="cisco_ios", command="show users", data=show_users)
              if r["line"].lstrip().startswith("*")]
        ip = me[0]["location"] if me else ""
        if not re.match(r"^\d+\.\d+\.\d+\.\d+$", ip):
            return None
        arp = []
        for addr in (ip, gateway):
            if addr:
                rows = parse_output(platform="cisco_ios", command="show ip arp", data=show_arp(addr))
                arp = [r for r in rows if r["ip_address"] == addr and re.match(r"^[0-9a-fA-F.]{14}$", r["mac_address"])]
            if arp:
                break
        if not arp:
            return None
        via = arp[0]["interface"]
        if via and not via.lower().startswith("vlan"):
            return _full_name(via, names) or via             # a routed port: the session arrives right there
        rows = parse_output(platform="cisco_ios", command="show mac address-table",
                            data=show_mac(arp[0]["mac_address"]))
        ports = [p for r in rows for p in (r["destination_port"] if isinstance(r["destination_port"], list)
                                           else [r["destination_port"]])]
        return _full_name(ports[0], names) if ports else None
    except Exception:  # noqa: BLE001 - textfsm errors on odd output: unknown, never a crash
        return None


#: where the IOS driver's MAC-learning capability comes from (plan's note), by the probe's answer
LEARNING_SOURCE = {True: "the device answers show mac address-table learning",
                   False: "the device does not know show mac address-table learning (Cisco documents per-VLAN MAC "
                          "learning control for e.g. the Catalyst 3560/3750, not for the 2960)"}


class IosDriver(NapalmDriver):
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
    napalm_name = "ios"
    config_rejected = _CONFIG_REJECTED
    login_fix = "check address, port, username, password and enable secret"
    commit_confirm_missing = "commit-confirm needs the IOS 'archive' feature, which is not enabled"
    replace_label = "configure replace"
    #: ``configure replace`` even when equal, so the running config text is re-established exactly
    commit_unchanged_replace = True

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        super().__init__(host, port, username, password, optional_args, timeout)
        self._caps: Capabilities | None = None
        #: trunk encapsulation line needed (ISL-capable platform), decided by facts()
        self._encapsulation = False
        #: the merge candidate loaded last, checked by commit() (:func:`unapplied`)
        self._candidate: str | None = None
        #: the VLAN database (show vlan) read by the last facts(), for the render's stale-VLAN cleanup
        self._database: dict[int, str] | None = None
        #: ``(model, os_version)`` of ``show version`` (facts() or the capabilities probe)
        self._platform: tuple[str, str] | None = None

    # ------------------------------------------------------------------ NapalmDriver hooks
    def _napalm_optional_args(self) -> dict:
        """Defaults: the enable secret is the password; netmiko waits up to ``timeout`` s for any command's echo and
        prompt (``read_timeout_override``): netmiko's own 10 s echo wait fails a ``write memory`` or ``copy`` on a
        busy switch ("The command echo was not detected")."""
        return {"secret": self._password, "read_timeout_override": self.timeout,
                **super()._napalm_optional_args()}

    device_message = staticmethod(device_message)
    parse_ports = staticmethod(parse_port_states)
    parse_vlans = staticmethod(parse_vlans)

    def device_vlans(self, config_text: str) -> dict[int, str]:
        """``show vlan`` (NAPALM ``get_vlans``): also the default VLANs the running config does not list."""
        vlans = self._call("get_vlans", self._dev().get_vlans)
        return {int(vid): v.get("name", "") for vid, v in vlans.items()}

    def _show(self, command: str) -> str:
        """One ``show`` command's output; '' when the device does not know it."""
        out = self._call(command, self._dev().cli, [command])[command]
        return "" if "Invalid input" in out or "Incomplete command" in out else out

    def model_of(self, config_text: str):
        """The port model of the running config plus ``show vtp status`` and ``show etherchannel summary``
        (:func:`harmless.switch_drivers.ios.model.parse_model`)."""
        show = {c: self._show(c) for c in ("show vtp status", "show etherchannel summary")}
        return parse_model(config_text, {c: o for c, o in show.items() if o})

    def session_port(self, model) -> str | None:
        """The port this SSH session arrives on (:func:`session_port_of`), None when it cannot be told."""
        users = self._show("show users")
        if not users:
            return None
        gw = re.search(r"^ip (?:default-gateway|route 0\.0\.0\.0 0\.0\.0\.0) (\d+\.\d+\.\d+\.\d+)",
                       self._facts_config or "", re.M)
        return session_port_of(users, lambda ip: self._show(f"show ip arp {ip}"),
                               lambda mac: self._show(f"show mac address-table address {mac}"),
                               [p.interface for p in model.ports], gw.group(1) if gw else None)

    def _abort_open(self, dev: Any) -> None:
        """Disconnect netmiko when login worked but e.g. ``enable`` was refused."""
        half_open = getattr(dev, "_netmiko_device", None)
        if half_open is not None:
            try:
                half_open.disconnect()
            except Exception:  # noqa: BLE001
                pass

    # ------------------------------------------------------------------ read
    @property
    def capabilities(self) -> Capabilities:
        """Probe ``show archive`` once: commit-confirm needs IOS's archive feature.

        Always: replace (``configure replace``), QinQ (``switchport mode dot1q-tunnel``; the outer tag's TPID
        is 0x8100 on IOS, hence ``stag_tpids=(0x8100,)``), link state (``get_interfaces``), a port's
        ``shutdown``. No LAG support in the template. Layer 2 protocol tunnelling by platform
        (:func:`~.platforms.l2pt_support` of the model and release ``show version`` gives; tunnelled PDUs carry
        :data:`~.platforms.TUNNEL_MAC` on the trunk). MAC learning per VLAN (``no mac address-table learning vlan``,
        Catalyst 3750-X/3560-X Software Configuration Guide 15.0(2)SE, "Disabling MAC Address Learning on a VLAN";
        not on every platform: the Catalyst 2960 guide has no such section) where the device knows ``show mac
        address-table learning``.

        Raises:
            DeviceError: not open, or the probe failed.
        """
        if self._caps is None:
            out = self._call("show archive", self._dev().cli, ["show archive"])["show archive"]
            archive = bool(out.strip()) and "not enabled" not in out and "Invalid input" not in out
            if self._platform is None:
                f = self._call("get_facts", self._dev().get_facts)
                self._platform = (f.get("model", ""), f.get("os_version", ""))
            l2pt, source = l2pt_support(*self._platform)
            learning = bool(self._show("show mac address-table learning"))
            self._caps = Capabilities(commit_confirm=archive, replace=True, qinq=True, lag=False,
                                      stag_tpids=(0x8100,), link_state=True, l2pt=l2pt, l2pt_mac=TUNNEL_MAC,
                                      l2pt_source=source, port_admin=True, mac_learning_off=learning,
                                      mac_learning_source=LEARNING_SOURCE[learning])
        return self._caps

    def facts(self) -> DeviceFacts:
        """See :meth:`NapalmDriver.facts` (VLANs from ``get_vlans``); also decides, for :meth:`render`, whether
        trunks need ``switchport trunk encapsulation dot1q`` (from ``show interfaces switchport``:
        "Administrative Trunking Encapsulation: negotiate" = ISL-capable; model name as fallback).
        """
        f = super().facts()
        self._platform = (f.model, f.os_version)
        self._database = dict(f.vlans)
        switchport = self._call("show interfaces switchport", self._dev().cli,
                                ["show interfaces switchport"])["show interfaces switchport"]
        self._encapsulation = needs_trunk_encapsulation(
            None if "Invalid input" in switchport else switchport, f.model)
        return f

    def render_port_admin(self, interface: str, enabled: bool) -> str:
        """``shutdown`` / ``no shutdown`` of one interface (:func:`render.render_port_admin`)."""
        return render_port_admin(interface, enabled)

    # ------------------------------------------------------------------ offline
    def saved_capabilities(self) -> Capabilities:
        """Without the device its ``archive`` and ``show mac address-table learning`` cannot be probed: no
        commit-confirm assumed, per-VLAN learning control unknown (nothing rendered, nothing said: the plan online
        says what the device has); nor its model: which link-local protocols it tunnels is unknown (``l2pt`` None:
        the device decides at commit); the rest as online."""
        return Capabilities(commit_confirm=False, replace=True, qinq=True, lag=False, stag_tpids=(0x8100,),
                            link_state=True, l2pt=None, l2pt_mac=TUNNEL_MAC, port_admin=True, mac_learning_off=None)

    def saved_vlans(self, config_text: str, model) -> dict[int, str]:
        """The config's ``vlan`` blocks plus IOS's built-in VLANs (what ``show vlan`` lists online); on a VTP
        server/client also every VLAN the config references (its VLAN database is not in the config)."""
        vlans = {**IOS_DEFAULT_VLANS, **parse_vlans(config_text)}
        if model.vtp_mode in ("server", "client"):
            vlans = {**{v: "" for v in model.vlans}, **vlans}
        return vlans

    def load_saved(self, config_text: str) -> DeviceFacts:
        """See :meth:`NapalmDriver.load_saved`; trunks get ``switchport trunk encapsulation dot1q`` when any port of
        the config has a ``switchport trunk encapsulation`` line (an ISL-capable platform), and the VLAN database
        is taken as the config says (no stale-VLAN cleanup beyond it)."""
        facts = super().load_saved(config_text)
        self._encapsulation = "switchport trunk encapsulation" in config_text
        self._database = None
        return facts

    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Render ``templates/harmless.j2`` (see :func:`render.render_config`).

        Uses what the last :meth:`facts` read (no device access here): the running config and the VLAN database,
        for the conversion-hazard cleanup lines, and the trunk-encapsulation decision. Before any ``facts()`` it
        renders without cleanup and without the encapsulation line.
        """
        return render_config(access, trunks, current=self._facts_config, trunk_encapsulation=self._encapsulation,
                             database=self._database)

    # ------------------------------------------------------------------ a staged fencing candidate
    #: the file on the device's file system that holds a staged fencing candidate (NAPALM's ``merge_cfg`` of the
    #: staging session: ``up``'s own candidate file stays untouched)
    STAGE_FILE = "harmless-fence.txt"
    can_stage = True

    def stage(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Load the fencing candidate into :data:`STAGE_FILE` (NAPALM's merge candidate, inline transfer) and keep
        it for :meth:`fence` (see :meth:`SwitchDriver.stage`); the take-over is then ``copy`` + ``write memory``."""
        self._dev().merge_cfg = self.STAGE_FILE
        return self.load_merge(self.render(access, trunks))

    def unstage(self) -> None:
        """Empty the staged candidate file (NAPALM ``discard_config``: ``copy null:``), ignoring failures."""
        try:
            if self._device is not None and getattr(self._device, "merge_cfg", "") == self.STAGE_FILE:
                self._call("discard the staged candidate", self._device.discard_config)
        except Exception:  # noqa: BLE001 - best effort
            pass

    # ------------------------------------------------------------------ candidate workflow
    def load_merge(self, config: str) -> str:
        """See :meth:`NapalmDriver.load_merge`; remembers ``config`` for the check in :meth:`commit`."""
        diff = super().load_merge(config)
        self._candidate = config
        return diff

    def commit(self, revert_in: int | None = None) -> None:
        """Commit the loaded candidate (IOS: copy to running-config / configure replace, then write mem).

        Args:
            revert_in: seconds (60..7200, whole minutes) for commit-confirm; needs
                ``capabilities.commit_confirm`` (the IOS archive feature).

        Raises:
            NotImplementedError: ``revert_in`` given but the device has no archive feature.
            CommitError: the device rejected the candidate (NAPALM has already tried its rollback;
                use :meth:`apply` for a verified restore), or the running config does not show what the
                merged candidate asked for (:func:`unapplied`).
        """
        super().commit(revert_in)
        candidate, self._candidate = self._candidate, None
        if candidate:
            missing = unapplied(candidate, self.running_config(), self.device_vlans(""))
            if missing:
                raise CommitError(self.where, "the device did not apply " + "; ".join(missing[:3])
                                  + " (IOS refused a line with 'Command rejected', which a merge does not report)",
                                  "check the port's mode/nonegotiate/encapsulation lines on the device")

    def restore(self, saved_config: str) -> str:
        """Replace the running config with ``saved_config`` (``configure replace``, see :meth:`NapalmDriver.restore`).

        Returns:
            The diff the device reported before the replace ('' when already equal). The replace is
            committed even then, so the running config text is re-established exactly.

        A port that changes ``switchport mode`` is first moved to its saved mode by a small line-wise merge
        (:func:`hazards.replace_bridge`), because IOS's replace cannot change the mode of a
        ``switchport nonegotiate`` port (or drop the encapsulation of a trunk) and would abort.

        Raises:
            CommitError: the device refused the mode changes or the replace.
        """
        dev = self._dev()
        if self._call("show archive config rollback timer", dev.has_pending_commit):
            # a commit-confirm of a run that was killed before confirming: IOS refuses any other config session
            # until it is confirmed or reverted; revert it now (the config it had before that commit comes back)
            log.warning("ios %s: an unconfirmed commit-confirm is pending; reverting it before the restore", self.where)
            self._call("configure revert now", dev.rollback)
        bridge = replace_bridge(self.running_config(), saved_config)
        if bridge:                                   # see hazards.py: nonegotiate / encapsulation ports
            lines = [ln for ln in bridge.splitlines() if ln.strip() not in ("!", "end")]
            out = self._call("pre-replace mode changes", dev.device.send_config_set, lines)
            if "Command rejected" in out or "Invalid input" in out:
                raise CommitError(self.where, "pre-replace mode changes were refused: "
                                  + device_message(self._redact(out)), "restore the saved config by hand")
            log.info("ios %s: set %d port mode(s) before configure replace", self.where, bridge.count("interface "))
        diff = super().restore(saved_config)
        self._drop_database_vlans(saved_config)
        return diff

    # ------------------------------------------------------------------ flash: (issue #23, :mod:`.files`)
    def file_store(self) -> str:
        """The file system NAPALM transfers to (``dest_file_system``, e.g. ``flash:``; discovered at open)."""
        return getattr(self._dev(), "dest_file_system", None) or "flash:"

    def _files(self, what: str, fn, *args):
        """Run one :mod:`.files` operation on the netmiko session; its failures as DeviceError (redacted)."""
        try:
            return fn(self._dev().device, self.file_store(), *args, self.timeout)
        except (OSError, ValueError) as exc:
            raise DeviceError(self.where, f"{what} failed ({self._redact(str(exc))})",
                              "check the file system's free space and that the file name is allowed") from None

    def write_file(self, name: str, text: str) -> None:
        """``tclsh`` ``puts`` (:func:`.files.put_text`): HARMLESS's own small text files."""
        self._call(f"write {name}", self._files, f"write {name}", files.put_text, name, text)

    def write_config_copy(self, name: str, config: str) -> None:
        """``copy running-config flash:NAME``: the device writes its own running config (which is ``config`` now)."""
        self._call(f"copy running-config to {name}", self._files, f"copy running-config to {name}",
                   files.copy_running, name)

    def read_file(self, name: str) -> str | None:
        """``more flash:NAME`` (None: no such file)."""
        return self._call(f"read {name}", self._files, f"read {name}", files.more, name)

    def read_config_copy(self, name: str) -> str | None:
        """``more`` of a copied running config, with the header lines NAPALM's ``get_config`` filters removed."""
        raw = self.read_file(name)
        return None if raw is None else files.config_text(raw)

    def delete_file(self, name: str) -> None:
        """``delete /force flash:NAME`` (a missing file is fine)."""
        self._call(f"delete {name}", self._files, f"delete {name}", files.delete, name)

    def _drop_database_vlans(self, saved_config: str) -> None:
        """After a replace: delete HARMLESS VLANs (name ``harmless-*``) that only the VLAN database holds.

        On a VTP server (or client) VLANs 1-1005 live in vlan.dat, not in the running config, so ``configure
        replace`` leaves the VLANs HARMLESS created behind; this removes those the saved config does not define and
        the running config does not show (on a transparent switch the replace has already removed them).
        """
        running = parse_vlans(self.running_config())
        saved = parse_vlans(saved_config)
        stale = sorted(vid for vid, name in self.device_vlans("").items()
                       if name.startswith(OWN_VLAN_PREFIX) and vid not in saved and vid not in running)
        if stale:
            self._call("delete HARMLESS VLANs from the VLAN database", self._dev().device.send_config_set,
                       [f"no vlan {vid}" for vid in stale])
            log.info("ios %s: deleted %d HARMLESS VLAN(s) from the VLAN database (VTP server)", self.where, len(stale))


__all__ = ["IosDriver", "device_message", "unapplied"]
