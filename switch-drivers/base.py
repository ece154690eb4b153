"""The contract every legacy-switch driver fulfils (one sub-folder per switch OS, NAPALM style).

A driver talks to one device. It reads facts (read-only), renders the HARMLESS tagging config from a
template (pure), and applies it with the NAPALM candidate workflow: ``load_merge`` (returns the diff),
``commit`` (optionally with commit-confirm), ``confirm``, ``discard``, ``rollback``, and ``restore`` of a
saved running config (config replace). Methods a driver cannot do raise ``NotImplementedError``;
:class:`Capabilities` says up front what it can do so the planner can refuse before touching the device.
"""
from __future__ import annotations

import abc
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.models import parse_model
from harmless.switch_drivers.ownership import ConfigSyntax, syntax_for
from harmless.switch_drivers.portmodel import with_management

if TYPE_CHECKING:
    from harmless.switch_drivers.portmodel import SwitchModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Capabilities:
    """What a device/driver pair supports.

    Attributes:
        commit_confirm: ``commit_config(revert_in=s)`` + ``confirm_commit()`` (device reverts by itself
            if not confirmed within ``s`` seconds).
        replace: full config replace (used by ``restore``).
        qinq: 802.1ad S-tag per access port (dot1q-tunnel or equivalent).
        lag: trunk as a link aggregation group.
        stag_tpids: TPIDs the device can put on the outer (S-)tag of QinQ traffic on a trunk, e.g.
            ``(0x8100,)`` for Cisco dot1q-tunnel, ``(0x88a8, 0x8100)`` where the trunk's TPID is configurable
            (IEEE 802.1ad S-tag TPID is 0x88a8). Empty when ``qinq`` is False.
        link_state: ``link_states()`` is implemented (used for link-state mirroring to br-of).
        l2pt: link-local protocols the device can tunnel through an access port's VLAN (names of
            :data:`harmless.switch_drivers.l2pt.PROTOCOLS`); None = the driver cannot tell for this model (the
            device itself rejects what it cannot do, at commit).
        l2pt_mac: the destination MAC tunnelled PDUs carry on the trunk (:data:`~.l2pt.TUNNEL_MAC` on Cisco and
            Junos, which rewrite it), or None where they keep their own (Arista's L2 protocol forwarding).
        l2pt_source: the vendor document the protocol list comes from (for ``plan``'s ``l2pt-unsupported`` warning).
        l2pt_caveat: what the operator must check for tunnelling to work that HARMLESS does not configure (a
            ``plan`` warning, ``l2pt-caveat``, whenever a port tunnels something), '' when nothing.
        port_admin: :meth:`SwitchDriver.render_port_admin` is implemented and ``restore`` gives such a change back
            exactly (a controller's port-down shuts the legacy port, :mod:`harmless.portmod`).
        mac_learning_off: the device can turn MAC learning off for HARMLESS's VLANs (None: unknown, e.g. offline
            without the probe); the render does it for changes with ``no_learning``. ``mac_learning_scope``:
            ``vlan`` (per VLAN) or ``port`` (per interface, on the access ports and trunks: only where a trunk
            carries HARMLESS's VLANs alone, i.e. not ``shared``).
            ``mac_learning_source``: where that was learned (a probe, the vendor's documentation).
    """

    commit_confirm: bool = False
    replace: bool = True
    qinq: bool = False
    lag: bool = False
    stag_tpids: tuple[int, ...] = ()
    link_state: bool = False
    l2pt: tuple[str, ...] | None = ()
    l2pt_mac: str | None = None
    l2pt_source: str = ""
    l2pt_caveat: str = ""
    port_admin: bool = False
    mac_learning_off: bool | None = False
    mac_learning_scope: str = "vlan"
    mac_learning_source: str = ""


@dataclass(frozen=True)
class PortVlanState:
    """One switch port's 802.1Q state as the device reports it.

    Attributes:
        name: interface name as the device spells it (``FastEthernet0/7``).
        mode: ``access``, ``trunk``, ``dynamic`` (negotiated, IOS default) or ``tunnel`` (dot1q-tunnel).
        access_vid: VID of an access/dynamic port (1..4094), None for trunks.
        native_vid: untagged VID of a trunk, None for access ports.
        allowed_vids: VIDs a trunk carries; None means all (1-4094).
        shutdown: administratively down.
    """

    name: str
    mode: str
    access_vid: int | None = None
    native_vid: int | None = None
    allowed_vids: tuple[int, ...] | None = None
    shutdown: bool = False


@dataclass(frozen=True)
class DeviceFacts:
    """Read-only snapshot of a device, enough for planning.

    Attributes:
        hostname, model, os_version: from the device.
        interfaces: every interface name the device has.
        vlans: VID -> VLAN name, for every VLAN configured on the device.
        ports: interface name -> :class:`PortVlanState`, for physical ports.
        port_model: what every port *is* now (:class:`~harmless.switch_drivers.portmodel.SwitchModel`), None when
            the driver has no port model; preflight (:mod:`harmless.preflight`) reads it.
        session_port: the interface HARMLESS's own management session arrives on, None when unknown.
    """

    hostname: str
    model: str
    os_version: str
    interfaces: tuple[str, ...]
    vlans: dict[int, str]
    ports: dict[str, PortVlanState] = field(default_factory=dict)
    port_model: "SwitchModel | None" = None
    session_port: str | None = None


@dataclass(frozen=True)
class AccessPortChange:
    """Make ``interface`` an access port of its own HARMLESS VLAN ``vid`` named ``vlan_name``.

    With ``qinq`` the port becomes an 802.1ad customer port instead (Cisco/Arista ``switchport mode dot1q-tunnel``,
    Junos ``input-vlan-map push``): every frame, tagged by the customer or not, gets the outer S-tag ``vid`` on the
    trunk and customer C-tags pass through untouched. Only for drivers with ``capabilities.qinq``.

    ``l2pt`` names the link-local protocols the device tunnels for the port (:mod:`.l2pt`; ``()``: none, and any
    tunnelling the port had before is removed).
    """

    interface: str
    vid: int
    vlan_name: str
    qinq: bool = False
    l2pt: tuple[str, ...] = ()
    #: turn MAC learning off for this port's VLAN (or on the port, where the device does it per port); only for
    #: drivers with ``capabilities.mac_learning_off``
    no_learning: bool = False


@dataclass(frozen=True)
class TrunkChange:
    """Make ``interface`` a trunk that carries exactly ``vids`` (tagged) to the HARMLESS server.

    ``stag_tpid`` is the TPID of the outer tag of QinQ ports' traffic on this trunk (0x8100 or 0x88a8); drivers
    whose device cannot set it leave the device default (which must then be in ``capabilities.stag_tpids``).

    ``shared``: the port keeps the VLANs it carries (inventory ``shared: true``): ``vids`` are *added* (IOS/EOS
    ``switchport trunk allowed vlan add``, Junos ``vlan members`` without deleting the old ones; ProCurve is
    additive anyway). ``bring_up``: the port is administratively down and is brought up (IOS/EOS ``no shutdown``,
    Junos ``delete interfaces X disable``, ProCurve ``interface X enable``).

    ``names``: ``((vid, name), ...)`` for VIDs only trunks carry (no access port names them), e.g. the heartbeat
    VLAN of an active/standby pair (``harmless-<switch>-hb``): so the device names it as HARMLESS's.
    ``no_learning``: MAC learning off for these VLANs (or on this port, see :class:`AccessPortChange`).
    """

    interface: str
    vids: tuple[int, ...]
    stag_tpid: int = 0x8100
    shared: bool = False
    bring_up: bool = False
    names: tuple[tuple[int, str], ...] = ()
    no_learning: bool = False


class SwitchDriver(abc.ABC):
    """One legacy switch, reached over its management plane.

    Args:
        host: management address (name or IP).
        port: SSH (or API) TCP port.
        username: login name.
        password: login password; drivers must never log it or put it in exceptions.
        optional_args: driver-specific NAPALM ``optional_args`` (never holds the password).
        timeout: per-operation timeout in seconds.

    Raises (all methods): ``harmless.errors.DeviceError`` (unreachable, refused, timed out) and
    ``harmless.errors.CommitError`` (commit rejected; the driver has tried to restore the original).
    """

    #: NAPALM driver name / inventory ``driver`` value (``ios``, ``eos``, ...)
    name: str = ""

    def __init__(self, host: str, port: int, username: str, password: str,
                 optional_args: dict | None = None, timeout: int = 60):
        self.host, self.port, self.username = host, port, username
        self._password = password
        self.optional_args = dict(optional_args or {})
        self.timeout = timeout
        #: running config saved by the last :meth:`apply` (before it changed anything)
        self.last_saved_config: str | None = None
        #: on a switch HARMLESS migrated before: its config with every object HARMLESS owns as HARMLESS found it (set
        #: by the planner, :func:`harmless.steps.as_found`); a render that derives lines from what a port had before
        #: HARMLESS (Junos interface ranges, :mod:`.junos.ranges`) reads it instead of the running config, so a
        #: second render of the same plan is the same candidate. None: the running config is what HARMLESS found.
        self.found_config: str | None = None

    @property
    def where(self) -> str:
        """``host:port``, the ``where`` of every error a driver raises."""
        return f"{self.host}:{self.port}"

    def __repr__(self) -> str:  # never show the password
        return f"{type(self).__name__}(host={self.host!r}, port={self.port}, username={self.username!r})"

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    @abc.abstractmethod
    def open(self) -> None:
        """Connect and log in. Raises DeviceError naming host:port when unreachable or refused."""

    @abc.abstractmethod
    def close(self) -> None:
        """Disconnect (idempotent)."""

    @property
    @abc.abstractmethod
    def capabilities(self) -> Capabilities:
        """What this device supports (may probe the device once after ``open``)."""

    @abc.abstractmethod
    def facts(self) -> DeviceFacts:
        """Read hostname, interfaces, VLANs and per-port VLAN state. Read-only."""

    @abc.abstractmethod
    def running_config(self) -> str:
        """The running configuration text, exactly as the device prints it."""

    @abc.abstractmethod
    def render(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Render the tagging config (pure; from the driver's template)."""

    @abc.abstractmethod
    def load_merge(self, config: str) -> str:
        """Load ``config`` as a merge candidate; return the device's diff ('' when nothing changes)."""

    @abc.abstractmethod
    def discard(self) -> None:
        """Drop a loaded candidate."""

    @abc.abstractmethod
    def commit(self, revert_in: int | None = None) -> None:
        """Commit the candidate; with ``revert_in`` seconds, as commit-confirm (needs capabilities.commit_confirm)."""

    def confirm(self) -> None:
        """Confirm a commit-confirm commit."""
        raise NotImplementedError

    @abc.abstractmethod
    def rollback(self) -> None:
        """Undo the last commit."""

    #: driver whose port model reads this device's config syntax (:func:`..models.parse_model`); None: ``name``
    port_model_syntax: str | None = None

    def port_model(self):
        """What every port is now: the :class:`~.portmodel.SwitchModel` of the running config. Read-only.

        The default parses :meth:`running_config` with :func:`..models.parse_model`; drivers whose model also
        needs ``show`` output (VTP status, port-channel summary) override this to pass it. The SVI carrying
        :attr:`host` is marked ``management`` (:func:`..portmodel.with_management`).

        Raises:
            DeviceError: the device cannot be read.
            NotImplementedError: the driver has no port model.
            ValueError: the running config does not parse (message says where).
        """
        return with_management(parse_model(self.port_model_syntax or self.name, self.running_config()), self.host)

    # ------------------------------------------------------------------ offline (a saved config for the device)
    def saved_capabilities(self) -> Capabilities:
        """What planning assumes of this device when only its saved config is known (offline planning): the
        static :attr:`capabilities`; a driver whose capabilities need a probe of the device overrides this with
        the safe assumption (e.g. IOS without its archive: no commit-confirm)."""
        return self.capabilities

    def load_saved(self, config_text: str) -> DeviceFacts:
        """Read a saved running config in place of the device (offline planning; no device access).

        Afterwards :meth:`render` renders against this config as if :meth:`facts` had read it from the device.
        What only the device knows is missing from the facts: ``model``, ``os_version``, ``session_port``, and
        interfaces the config does not name.

        Raises:
            NotImplementedError: this driver cannot plan from a saved config.
            ValueError: the text is not a configuration of this OS (message says where).
        """
        raise NotImplementedError(f"driver {self.name} cannot plan from a saved config")

    def saved_diff(self, running: str, candidate: str) -> str:
        """What merging ``candidate`` into the saved ``running`` config would change, computed here without the
        device ('' when nothing); the same text this driver's :meth:`load_merge` reports where that diff is computed
        locally.

        Raises:
            NotImplementedError: the driver's online diff is the device's own; the caller uses its generic one.
        """
        raise NotImplementedError

    def config_syntax(self) -> ConfigSyntax:
        """How this device's running config splits into objects (:mod:`.ownership`: what HARMLESS owns, the merge of
        ``down``). Raises KeyError when the driver has none."""
        return syntax_for(self.port_model_syntax or self.name)

    def ports_of(self, config_text: str) -> dict[str, PortVlanState]:
        """Per-port 802.1Q state of a config text (pure; what the device would report with that config).

        Raises:
            NotImplementedError: the driver cannot parse it.
        """
        raise NotImplementedError

    def link_states(self) -> dict[str, str]:
        """Operational state per interface: ``{name: "up" | "down" | "admin-down"}``."""
        raise NotImplementedError

    def port_properties(self) -> dict[str, dict]:
        """Per interface what the device reports of its port: ``{name: {"link": "up" | "down" | "admin-down",
        "speed_mbps": float (0 when unknown)}}`` (NAPALM ``get_interfaces``: ``is_up``, ``is_enabled``, ``speed``).

        Raises:
            NotImplementedError: the driver cannot read them.
            DeviceError: the device cannot be read.
        """
        raise NotImplementedError

    def render_port_admin(self, interface: str, enabled: bool) -> str:
        """The config that shuts (``enabled=False``) or re-enables one interface, in the device's syntax (pure;
        applied with :meth:`apply`). Only for drivers with ``capabilities.port_admin``.

        Raises:
            NotImplementedError: the driver cannot.
            ValueError: ``interface`` is not an interface name of this OS.
        """
        raise NotImplementedError

    def interface_counters(self) -> dict[str, dict[str, int]]:
        """Traffic counters per interface as the device counts them (read-only; ``harmless exporter``).

        Returns:
            ``{name: {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped"}}`` (packets:
            unicast + multicast + broadcast; dropped: discards); a counter the device does not report is left out.

        Raises:
            NotImplementedError: the driver cannot read counters.
            DeviceError: the device cannot be read.
        """
        raise NotImplementedError

    def port_states(self) -> dict[str, PortVlanState]:
        """Every physical port's 802.1Q state now (read-only): which trunk carries which VLANs, what an
        active/standby pair reads to know who forwards (:func:`harmless.ha.plan.device_role`). Default: the ports
        of :meth:`facts`; drivers that parse the running config read only that.

        Raises:
            DeviceError: the device cannot be read.
        """
        return self.facts().ports

    #: the fencing candidate can be loaded long before a take-over and committed later in the same session
    #: (:meth:`stage`), so that the take-over itself is only the commit
    can_stage: bool = False

    def stage(self, access: list[AccessPortChange], trunks: list[TrunkChange]) -> str:
        """Load the fencing candidate of :meth:`fence` now, without committing it; keep this session open and pass
        the returned diff to :meth:`fence` as ``staged_diff`` at the take-over.

        Raises:
            NotImplementedError: the driver cannot (``can_stage`` is False).
            DeviceError: the device cannot be reached.
        """
        raise NotImplementedError(f"driver {self.name} cannot stage a candidate")

    def unstage(self) -> None:
        """Drop a staged candidate (best effort; the session stays open)."""

    def fence(self, access: list[AccessPortChange], trunks: list[TrunkChange], staged_diff: str | None = None) -> str:
        """Move HARMLESS's VLANs from one trunk to another in ONE commit (active/standby servers,
        docs/high-availability.md): ``trunks`` set each trunk's allowed VLANs exactly, the trunk that loses the
        VLANs first (:meth:`harmless.plan.SwitchPlan.trunk_changes`), ``access`` repeat the ports' own VLANs (a
        no-op on the device, so every VLAN keeps its name). Only for drivers in
        :data:`harmless.switch_drivers.EXACT_TRUNK_VLANS`, whose render sets a trunk's list exactly.

        The commit is :meth:`apply`'s: applied, or the device back in the config it had (verified). A device that
        commits atomically (EOS sessions, Junos) switches both trunks at once; one that applies the candidate line
        by line (IOS ``copy``) passes through "no trunk carries them", never "both do".

        ``staged_diff``: the same candidate was loaded by :meth:`stage` in this session: it is committed without
        loading it again (on IOS that saves the transfer of the candidate onto ``flash:``, most of the time).

        Returns:
            The diff committed ('' when the device already had it: this server's trunk already carries them).

        Raises:
            CommitError / DeviceError: as :meth:`apply` (the VLANs stay where they were).
        """
        return self.apply(self.render(access, trunks), loaded_diff=staged_diff)

    @abc.abstractmethod
    def restore(self, saved_config: str) -> str:
        """Replace the running config with ``saved_config`` (a text from ``running_config``); return the diff applied."""

    # ------------------------------------------------------------------ the device's own file store (issue #23)
    def file_store(self) -> str | None:
        """Where this device keeps files HARMLESS writes (``flash:``, ``/var/tmp/``), or None when the platform offers
        no file store HARMLESS can use (docs/high-availability.md says why, per platform). Read-only."""
        return None

    def write_file(self, name: str, text: str) -> None:
        """Create or replace the file ``name`` (no directory part) in :meth:`file_store` with ``text``.

        Raises:
            NotImplementedError: no file store; DeviceError: the device refused or the session failed.
        """
        raise NotImplementedError(f"{self.name}: no file store on this platform")

    def write_config_copy(self, name: str, config: str) -> None:
        """Store ``config`` (the device's running config at this moment) as the file ``name``; default
        :meth:`write_file`. A driver whose device can copy its own running config to a file (IOS ``copy
        running-config flash:``) does that instead; the caller reads the file back and verifies it."""
        self.write_file(name, config)

    def read_file(self, name: str) -> str | None:
        """The text of the file ``name`` in :meth:`file_store`, None when it does not exist.

        Raises:
            NotImplementedError: no file store; DeviceError: the device cannot be read.
        """
        raise NotImplementedError(f"{self.name}: no file store on this platform")

    def read_config_copy(self, name: str) -> str | None:
        """A config file written by :meth:`write_config_copy`, as :meth:`running_config` would print that config
        (IOS strips the headers its ``copy`` adds, as NAPALM's ``get_config`` does); default :meth:`read_file`."""
        return self.read_file(name)

    def delete_file(self, name: str) -> None:
        """Delete the file ``name`` from :meth:`file_store` (a missing file is not an error).

        Raises:
            NotImplementedError: no file store; DeviceError: the device refused or the session failed.
        """
        raise NotImplementedError(f"{self.name}: no file store on this platform")

    # ------------------------------------------------------------------ shared workflow
    def apply(self, config: str, revert_in: int | None = None, loaded_diff: str | None = None) -> str:
        """Merge ``config``, commit it, and guarantee "applied, or exactly the original config" (every driver).

        Sequence: save the running config, load the merge candidate and diff it (no diff → discard,
        return ''), commit. If the commit fails, compare the running config with the saved text and,
        when NAPALM's own rollback did not re-establish it byte for byte, :meth:`restore` it.

        Args:
            config: device config text (usually from :meth:`render`).
            revert_in: optional commit-confirm timer in seconds (see :meth:`commit`).
            loaded_diff: ``config`` is already loaded as the merge candidate in this session, with this diff (the
                orchestrator's ``compute`` loaded it): it is not loaded again (a NAPALM IOS inline transfer alone
                takes about 8 s).

        Returns:
            The diff that was committed ('' when the device already had this config).

        Raises:
            CommitError: the commit failed and the original config is back (message says which line
                the device rejected); or the original could not be re-established (message says so).
            DeviceError: the session failed before anything was committed.
        """
        saved = self.running_config()
        self.last_saved_config = saved
        diff = self.load_merge(config) if loaded_diff is None else loaded_diff
        if not diff:
            self.discard()
            log.info("%s %s: nothing to change", self.name, self.where)
            return ""
        t0 = time.monotonic()
        try:
            self.commit(revert_in)
        except DeviceError as err:  # CommitError included
            self._reestablish(saved, err)
            raise CommitError(self.where, f"{err.problem}; the original running config is back (verified)",
                              err.fix) from None
        log.info("%s %s: committed %d diff lines in %.1f s", self.name, self.where, len(diff.splitlines()),
                 time.monotonic() - t0)
        return diff

    def reconnect(self) -> None:
        """Close and re-open the session (after a lost session). Raises DeviceError when the device stays away."""
        self.close()
        self.open()

    def _reestablish(self, saved: str, err: DeviceError) -> None:
        """After a failed commit: make the running config equal ``saved`` or raise CommitError.

        A session lost during the commit is re-opened once (:meth:`reconnect`) before comparing.
        """
        try:
            try:
                current = self.running_config()
            except DeviceError:
                log.warning("%s %s: session lost during the commit; reconnecting", self.name, self.where)
                self.reconnect()
                current = self.running_config()
            if current == saved:
                log.warning("%s %s: commit failed; NAPALM's rollback restored the original config",
                            self.name, self.where)
                return
            log.warning("%s %s: commit failed and the running config differs; restoring it",
                        self.name, self.where)
            self.restore(saved)
            if self.running_config() == saved:
                return
            problem = "the restored running config still differs from the saved one"
        except DeviceError as again:
            problem = f"restoring failed too ({again.problem})"
        raise CommitError(self.where, f"{err.problem}; {problem}",
                          "run harmless down: it restores the original config saved before the change (harmless "
                          "backups lists the saved configs)") from None
