"""Arista EOS driver: NAPALM ``eos`` (eAPI) + a jinja2 template + running-config parsing.

Every change goes through an EOS configuration session: NAPALM loads the candidate into ``configure session
napalm_N`` (a rejected line aborts the session, the running config is never touched), diffs it with ``show
session-config named N diffs`` and commits it atomically. Commit-confirm is ``configure session N commit timer
hh:mm:ss``: EOS reverts by itself unless the session is committed again in time. Restore is a replace through a
session (``rollback clean-config`` + the saved text), which re-establishes the text exactly.

Typical use::

    with EosDriver("10.0.0.3", 443, "admin", password) as dev:          # eAPI over HTTPS
        diff = dev.apply(dev.render(access, trunks), revert_in=120)      # exact original config or CommitError
        dev.confirm()
        ...
        dev.restore(saved)                                               # `harmless down`

Lab / non-default transport: ``optional_args={"transport": "http"}`` (pyeapi transports: https, http, ...).

NAPALM caveat handled here: after a session was lost mid-commit NAPALM still holds the old session name, and
EOS refuses to reopen a committed session; :meth:`EosDriver.restore` and :meth:`EosDriver.discard` start from a
fresh session name.
"""
from __future__ import annotations

import base64
import logging
import re

from harmless.switch_drivers.base import AccessPortChange, Capabilities, TrunkChange
from harmless.switch_drivers.eos import parse
from harmless.switch_drivers.eos.render import (L2PT_PROTOCOLS, STAG_TPIDS, profiles_now, render_config,
                                                render_port_admin)
from harmless.switch_drivers.napalm_glue import NapalmDriver

#: where :data:`L2PT_PROTOCOLS` comes from, and what HARMLESS does not configure for it
L2PT_SOURCE = "EOS User Manual, Layer 2 Protocol Forwarding: LLDP, LACP, STP (no CDP, VTP, PAgP, UDLD)"
L2PT_CAVEAT = ("EOS forwards link-local protocols only with a TCAM profile that has L2 protocol forwarding on most "
               "platforms (EOS User Manual, Layer 2 Protocol Forwarding, \"TCAM Profile\"); HARMLESS does not change "
               "the TCAM profile: check 'show hardware tcam profile' first")
#: everything this driver declares is available on every EOS NAPALM supports (>= 4.23); link-local protocols by L2
#: protocol forwarding (:data:`render.L2PT_PROTOCOLS`: bridged with their own destination, so ``l2pt_mac`` None)
CAPABILITIES = Capabilities(commit_confirm=True, replace=True, qinq=True, lag=True, stag_tpids=STAG_TPIDS,
                            link_state=True, l2pt=L2PT_PROTOCOLS, l2pt_mac=None, l2pt_source=L2PT_SOURCE,
                            l2pt_caveat=L2PT_CAVEAT, port_admin=True, mac_learning_off=True,
                            mac_learning_scope="port",
                            mac_learning_source="EOS: switchport mac address learning, per interface")
_EAPI_ERROR = re.compile(r"CLI command \d+ of \d+ '([^']*)' failed: ([^\[\]\n]+?)\s*(?:\[|$)", re.M)


log = logging.getLogger(__name__)

def device_message(text: str) -> str:
    """The rejected command and EOS's reason from a pyeapi/NAPALM error, on one line.

    Args:
        text: exception text, e.g. ``"Error [1002]: CLI command 7 of 12 'switchport access vlan 110' failed:
            invalid command [Invalid input]"``.

    Returns:
        ``"switchport access vlan 110: invalid command"``; the first non-empty line when the text has no
        eAPI error; ``""`` for empty text.
    """
    m = _EAPI_ERROR.search(text)
    if m:
        return f"{m.group(1)}: {m.group(2).strip()}"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else ""


class EosDriver(NapalmDriver):
    """One Arista EOS switch over eAPI (NAPALM ``eos``).

    Args:
        host, port, username, password, timeout: see :class:`SwitchDriver` (``port``: the eAPI port,
            443 for HTTPS by default on EOS).
        optional_args: NAPALM ``optional_args`` merged over ``{"port": port}`` (e.g. ``transport``,
            ``enable_password``).

    Capabilities: commit-confirm (EOS >= 4.23 config sessions with commit timer, the minimum NAPALM
    accepts), replace, QinQ (``switchport mode dot1q-tunnel``) with S-tag TPID 0x8100 or 0x88a8
    (``switchport dot1q ethertype``), LAG (``Port-Channel`` trunks), link state (``show interfaces``), a port's
    ``shutdown``, MAC learning off per interface (``no switchport mac address learning``).
    """

    name = "eos"
    napalm_name = "eos"

    @property
    def capabilities(self) -> Capabilities:
        """Static (:data:`CAPABILITIES`)."""
        return CAPABILITIES

    def render_port_admin(self, interface: str, enabled: bool) -> str:
        """``shutdown`` / ``no shutdown`` of one interface (:func:`render.render_port_admin`)."""
        return render_port_admin(interface, enabled)

    device_message = staticmethod(device_message)
    parse_ports = staticmethod(parse.parse_port_states)
    parse_vlans = staticmethod(parse.parse_vlans)

    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Render ``templates/harmless.j2`` (see :func:`render.render_config`) against the running config the last
        :meth:`facts` read (ports with an L2 protocol forwarding profile their ``l2pt`` no longer asks for lose it)."""
        return render_config(access, trunks, profiled=profiles_now(self._facts_config or ""))

    def _fresh_session(self) -> None:
        """Forget NAPALM's session name unless it holds a loaded, uncommitted candidate or a pending timer."""
        dev = self._dev()
        name = getattr(dev, "config_session", None)
        if not name:
            return
        try:
            sessions = dev.device.run_commands(["show configuration sessions"])[0]["sessions"]
        except Exception:  # noqa: BLE001 - the next call reports the real error
            return
        state = sessions.get(name, {}).get("state", "")
        if state not in ("pending", "pendingCommitTimer"):
            dev.config_session = None

    def abort_stale_sessions(self, include_own: bool = False) -> list[str]:
        """Abort configuration sessions a killed NAPALM run left behind (``napalm_*``, pending or pending its commit
        timer), which make every later NAPALM call fail with "Session is already in use"; aborting a timer session
        reverts its commit at once (EOS semantics). Sessions with other names (a person's) are left alone.

        Args:
            include_own: also abort this session's own (a commit-confirm not yet confirmed: before a restore).

        Returns:
            The names aborted.
        """
        dev = self._dev()
        mine = None if include_own else getattr(dev, "config_session", None)
        sessions = self._call("show configuration sessions", dev.device.run_commands,
                              ["show configuration sessions"])[0]["sessions"]
        stale = [n for n, v in sessions.items() if n.startswith("napalm_") and n != mine
                 and v.get("state") in ("pending", "pendingCommitTimer")]
        for n in stale:
            log.warning("eos %s: aborting configuration session %s (uncommitted, or its commit not confirmed)",
                        self.where, n)
            self._call(f"configure session {n} abort", dev.device.run_commands, [f"configure session {n} abort"])
        return stale

    def load_merge(self, config: str) -> str:
        """See :meth:`NapalmDriver.load_merge`; stale sessions of a killed run are aborted first."""
        self.abort_stale_sessions()
        return super().load_merge(config)

    def discard(self) -> None:
        """Abort the loaded session (if any)."""
        self._fresh_session()
        super().discard()

    # ------------------------------------------------------------------ flash: (issue #23)
    #: base64 characters per ``bash`` command when writing a file (well below any command-length limit)
    _CHUNK = 8192

    def file_store(self) -> str:
        """``flash:`` (``/mnt/flash`` in EOS's Linux shell)."""
        return "flash:"

    def _run(self, what: str, cmds: list[str], encoding: str = "text") -> list[dict]:
        return self._call(what, self._dev().device.run_commands, cmds, encoding=encoding)

    def write_file(self, name: str, text: str) -> None:
        """Write ``text`` to ``flash:NAME`` through EOS's Linux shell: ``bash timeout 30 echo <base64> | base64 -d``
        appended to a temporary file in ``/mnt/flash``, then ``mv`` over NAME (eAPI runs the commands in order; NAPALM
        eos runs ``bash timeout N ...`` the same way for ``traceroute``). Base64 keeps every byte exact."""
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
            raise ValueError(f"not a plain file name: {name!r}")
        data = base64.b64encode(text.encode()).decode()
        tmp = f"/mnt/flash/.{name}.tmp"
        chunks = [data[i:i + self._CHUNK] for i in range(0, len(data), self._CHUNK)] or [""]
        cmds = [f"bash timeout 30 echo {c} | base64 -d {'>' if i == 0 else '>>'} {tmp}" for i, c in enumerate(chunks)]
        self._run(f"write flash:{name}", cmds + [f"bash timeout 30 mv {tmp} /mnt/flash/{name}"])

    def _missing(self, what: str, cmd: str) -> dict | None:
        """Run one file command; None when EOS answers that the file does not exist (eAPI reports it as a failed
        command whose error text says "No such file"), else its result (other failures as :meth:`_call` maps them)."""
        dev = self._dev()
        try:
            return dev.device.run_commands([cmd], encoding="text")[-1]
        except Exception as exc:  # noqa: BLE001 - pyeapi's CommandError carries the device's text
            if "No such file" in self._redact(str(exc)):
                return None
            failure = exc

        def again():
            raise failure
        return self._call(what, again)             # not a missing file: mapped as any other failed command

    def read_file(self, name: str) -> str | None:
        """``more flash:NAME`` (None: no such file)."""
        out = self._missing(f"read flash:{name}", f"more flash:{name}")
        return None if out is None else str(out.get("output", ""))

    def delete_file(self, name: str) -> None:
        """``delete flash:NAME`` (a missing file is fine)."""
        self._missing(f"delete flash:{name}", f"delete flash:{name}")

    def restore(self, saved_config: str) -> str:
        """Replace the running config with ``saved_config`` through a new configuration session (stale sessions of a
        killed run are aborted first)."""
        if self.abort_stale_sessions(include_own=True):
            self._dev().config_session = None
        self._fresh_session()
        return super().restore(saved_config)


__all__ = ["EosDriver", "device_message"]
