"""Juniper Junos driver: NAPALM ``junos`` (PyEZ over NETCONF) + a jinja2 ``set`` template + config parsing.

The candidate is a list of ``set``/``delete`` commands (NAPALM loads them as ``load set``, a merge), each
migrated port's ``family ethernet-switching`` deleted first so no stale VLAN member survives. The VLAN
syntax follows the device: ELS (``interface-mode``) or the older non-ELS ``ethernet-switching``
(``port-mode``), detected from the running configuration and the model (:func:`parse.detect_syntax`) or
forced with ``optional_args={"junos_vlan_syntax": "els" | "legacy"}``.

Commit-confirm is ``commit confirmed N`` (whole minutes: NAPALM requires ``revert_in`` to be a multiple of 60,
so it is rounded up) followed by ``commit`` to confirm; Junos rolls back by itself when N minutes pass.
Restore is ``load override`` of the saved text (NAPALM ``load_replace_candidate``).

The running config Junos prints starts with a ``## Last commit: <time> by <user>`` comment that changes with
every commit; :meth:`JunosDriver.running_config` drops these volatile comment lines, so "restored exactly"
compares the configuration itself.
"""
from __future__ import annotations

import logging
import os
import re
import tempfile

from harmless.errors import DeviceError
from harmless.switch_drivers.base import AccessPortChange, Capabilities, TrunkChange
from harmless.switch_drivers.junos import parse
from harmless.switch_drivers.junos.conf import compare
from harmless.switch_drivers.junos.render import (L2PT_LEGACY, L2PT_PROTOCOLS, MODE_KEYWORD, render_config,
                                                  render_port_admin)
from harmless.switch_drivers.l2pt import TUNNEL_MAC
from harmless.switch_drivers.napalm_glue import NapalmDriver

log = logging.getLogger(__name__)

#: where the Junos protocol list comes from, and what HARMLESS cannot check for it
L2PT_SOURCE = ("Junos CLI Reference, protocol (Layer 2 Protocol Tunneling): cdp, lacp, lldp, stp, udld, vtp on "
               "EX2300/3400/4300/4600/4650 and QFX (MX: cdp, stp, vtp only; no PAgP)")
L2PT_CAVEAT = ("Junos: some platforms tunnel only on interfaces of a Q-in-Q (S-)VLAN (Junos 'Layer 2 Protocol "
               "Tunneling (L2PT)', VLAN Configuration Requirements); a commit the switch refuses changes nothing")
_VOLATILE = re.compile(r"^## Last (commit|changed):")


def device_message(text: str) -> str:
    """The Junos error(s) from a PyEZ/NAPALM exception text, on one line.

    Junos RPC errors carry ``edit_path``/``bad_element``/``message`` (NAPALM raises them as the list of dicts
    of PyEZ's ``ConfigLoadError.errs``); this keeps ``"<edit path> <bad element>: <message>"`` for at most three
    errors, or the first non-empty line.

    Example: ``"[{'edit_path': '[edit vlans]', 'bad_element': 'hl110', 'message': 'syntax error'}]"`` →
    ``"[edit vlans] hl110: syntax error"``.
    """
    found = []
    for chunk in re.findall(r"\{[^{}]*\}", text):
        msg = re.search(r"'message':\s*'([^']*)'", chunk)
        if not msg:
            continue
        el = re.search(r"'bad_element':\s*'([^']*)'", chunk)
        path = re.search(r"'edit_path':\s*'([^']*)'", chunk)
        where = " ".join(x.group(1).strip() for x in (path, el) if x)
        found.append(f"{where}: {msg.group(1).strip()}" if where else msg.group(1).strip())
    if found:
        return "; ".join(found[:3])
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else ""


class JunosDriver(NapalmDriver):
    """One Juniper EX/QFX switch over NETCONF (NAPALM ``junos``).

    Args:
        host, port, username, password, timeout: see :class:`SwitchDriver` (``port``: NETCONF over SSH, 830 or 22).
        optional_args: NAPALM ``optional_args`` merged over ``{"port": port, "ignore_warning": ["statement not
            found"]}``; ``junos_vlan_syntax`` (``els``/``legacy``) is ours and not passed to NAPALM.

    Capabilities: commit-confirm, replace, LAG (``ae`` trunks), link state. QinQ is declared unsupported
    (see :data:`render.QINQ_UNSUPPORTED`), so the planner refuses QinQ ports before touching the device.
    """

    name = "junos"
    napalm_name = "junos"

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        args = dict(optional_args or {})
        forced = args.pop("junos_vlan_syntax", None)
        if forced is not None and forced not in MODE_KEYWORD:
            raise ValueError(f"optional_args.junos_vlan_syntax must be one of {sorted(MODE_KEYWORD)}, not {forced!r}")
        super().__init__(host, port, username, password, args, timeout)
        #: ``"els"`` or ``"legacy"``; None until detected (facts/render) unless forced
        self.vlan_syntax: str | None = forced
        self._model = ""

    @property
    def capabilities(self) -> Capabilities:
        """Static: commit confirmed, load override, ae LAG trunks, interface state; no QinQ. Layer 2 protocol
        tunnelling (``layer2-control mac-rewrite``, tunnel MAC 01:00:0c:cd:cd:d0) on ELS switches only: non-ELS EX
        tunnel per Q-in-Q VLAN (:data:`render.L2PT_LEGACY`)."""
        els = self.vlan_syntax != "legacy"
        return Capabilities(commit_confirm=True, replace=True, qinq=False, lag=True, stag_tpids=(), link_state=True,
                            l2pt=L2PT_PROTOCOLS if els else (), l2pt_mac=TUNNEL_MAC,
                            l2pt_source=L2PT_SOURCE if els else L2PT_LEGACY, l2pt_caveat=L2PT_CAVEAT if els else "",
                            port_admin=True, mac_learning_off=True,
                            mac_learning_source="Junos: no-mac-learning under vlans")

    def render_port_admin(self, interface: str, enabled: bool) -> str:
        """``set``/``delete interfaces X disable`` (:func:`render.render_port_admin`)."""
        return render_port_admin(interface, enabled)

    def _napalm_optional_args(self) -> dict:
        args: dict = {"port": self.port, "ignore_warning": ["statement not found"]}
        args.update(self.optional_args)
        return args

    device_message = staticmethod(device_message)
    parse_ports = staticmethod(parse.parse_port_states)
    parse_vlans = staticmethod(parse.parse_vlans)

    def running_config(self) -> str:
        """The running configuration (curly text) without the volatile ``## Last commit/changed`` lines."""
        text = super().running_config()
        return "".join(ln for ln in text.splitlines(keepends=True) if not _VOLATILE.match(ln))

    def facts(self):
        """See :meth:`NapalmDriver.facts`; also detects the VLAN syntax (unless forced)."""
        f = super().facts()
        self._model = f.model
        if self.vlan_syntax is None:
            self.vlan_syntax = parse.detect_syntax(self._facts_config or "", f.model)
            log.info("junos %s: %s (%s VLAN syntax)", self.where, f.model, self.vlan_syntax)
        return f

    # ------------------------------------------------------------------ offline
    def saved_hostname(self, config_text: str) -> str:
        """``system host-name X`` of a saved configuration ('' when none)."""
        return next((p[2] for p in parse.config_paths(config_text) if p[:2] == ("system", "host-name")
                     and len(p) == 3), "")

    def load_saved(self, config_text: str):
        """See :meth:`NapalmDriver.load_saved`; the VLAN syntax (ELS or non-ELS) is read from the saved
        configuration (:func:`parse.detect_syntax`; the model, which decides it online when the config does not, is
        unknown: ELS then), unless ``optional_args.junos_vlan_syntax`` forces it."""
        facts = super().load_saved(config_text)
        if self.vlan_syntax is None:
            self.vlan_syntax = parse.detect_syntax(config_text, "")
        return facts

    def saved_diff(self, running: str, candidate: str) -> str:
        """The ``set`` commands merging ``candidate`` adds or removes, computed on the saved configuration
        (:func:`conf.compare`: ``load set`` + commit applied to its set paths)."""
        return compare(running, candidate)

    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Render ``templates/harmless.j2`` in the device's VLAN syntax (detected on first use; see module doc),
        deleting the non-ELS VLAN-side memberships of migrated ports and their Layer 2 protocol tunnelling found by the
        last :meth:`facts`.

        Raises:
            DeviceError: the syntax is not known yet and the device is not connected.
            ValueError: bad input (see :func:`render.render_config`).
        """
        if self.vlan_syntax is None:
            if self._device is None:
                raise DeviceError(self.where, "the Junos VLAN syntax (ELS or non-ELS) is not known yet",
                                  "open() the driver first or set optional_args.junos_vlan_syntax")
            self.facts()
        side = parse.vlan_side_members(self._facts_config) if self._facts_config else {}
        model = self.model_of(self._facts_config) if self._facts_config else None
        tunnelled = {p.interface for p in model.ports if p.l2pt} if model is not None else set()
        return render_config(access, trunks, syntax=self.vlan_syntax, vlan_side=side, tunnelled=tunnelled,
                             current=self.found_config or self._facts_config)

    # ------------------------------------------------------------------ /var/tmp (issue #23)
    #: the directory HARMLESS's files live in (Junos CLI User Guide, "file" commands; /var/tmp survives a reboot,
    #: ``request system storage cleanup`` deletes it: docs/high-availability.md)
    STORE = "/var/tmp/"

    def file_store(self) -> str:
        """``/var/tmp/``."""
        return self.STORE

    def _scp_put(self, local: str, remote: str) -> None:
        """Copy the local file to ``remote`` on the device with PyEZ's SCP utility (``jnpr.junos.utils.scp.SCP``, the
        documented PyEZ way to put a file on a Junos device; it opens an SSH channel of the NETCONF session's
        credentials). Tests substitute this method."""
        from jnpr.junos.utils.scp import SCP

        with SCP(self._dev().device) as scp:
            scp.put(local, remote_path=remote)

    def write_file(self, name: str, text: str) -> None:
        """Put ``text`` as ``/var/tmp/NAME`` (SCP of a private temporary file, removed afterwards)."""
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
            raise ValueError(f"not a plain file name: {name!r}")
        fd, local = tempfile.mkstemp(prefix="harmless-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            self._call(f"write {self.STORE}{name}", self._scp_put, local, self.STORE + name)
        finally:
            os.unlink(local)

    def _file_cli(self, command: str) -> str:
        return str(self._call(command, self._dev().cli, [command])[command])

    def read_file(self, name: str) -> str | None:
        """``file show /var/tmp/NAME`` (None when Junos answers that it cannot resolve the file)."""
        out = self._file_cli(f"file show {self.STORE}{name}")
        if re.search(r"could not resolve file|No such file", out):
            return None
        return out

    def delete_file(self, name: str) -> None:
        """``file delete /var/tmp/NAME`` (a missing file is fine)."""
        out = self._file_cli(f"file delete {self.STORE}{name}")
        if out.strip() and not re.search(r"could not resolve file|No such file", out):
            raise DeviceError(self.where, f"file delete {self.STORE}{name}: {out.strip().splitlines()[0]}",
                              "check the file's permissions on the switch")

    def commit(self, revert_in: int | None = None) -> None:
        """Commit; with ``revert_in`` as ``commit confirmed`` in whole minutes (rounded up, at least 1)."""
        if revert_in is not None and revert_in % 60:
            rounded = max(60, -(-revert_in // 60) * 60)
            log.info("junos %s: commit confirmed needs whole minutes: %d s -> %d s", self.where, revert_in, rounded)
            revert_in = rounded
        super().commit(revert_in)


__all__ = ["JunosDriver", "device_message"]
