"""The vendor-independent per-port model of a legacy switch (what every port *is* now), filled by each driver.

Every driver turns its OS's running config (plus what only ``show`` commands give: VTP status, port-channel
summary, STP mode) into one :class:`SwitchModel`. The planner's preflight rules read only this model, never vendor
text, and ``harmless ports --json`` prints :meth:`SwitchModel.to_json_dict` (the shape is fixed by issue #12):

    {"vtp_mode": "server"|"client"|"transparent"|"off"|null, "vlans": [every VID defined or referenced],
     "ports": [{"interface", "mode", "access_vid", "native_vid", "allowed_vids", "lag", "voice_vid", "dot1x",
                "port_security", "shutdown", "unparsed", ..., "l2pt" (only when the port tunnels protocols)}]}

Defaults are those the OS applies (IOS: access VLAN 1, trunk native 1, a switchport without ``switchport mode`` is
``dynamic``; EOS honours ``switchport default mode routed``; Junos resolves VLAN names to IDs; ProCurve derives modes
from VLAN membership). Lines on a port the model does not understand are kept in ``unparsed``, never dropped; a
line the reader cannot place on a port at all (a VLAN's port list it cannot read, a Junos statement that does not
parse) is kept in the switch's own ``unparsed`` with the reason (``"line 12: tagged A1,B1-16 (bad port range
'B1-16')"``), so no single line stops the reader: the JSON object then has an ``"unparsed"`` list too.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass, field, replace

#: port modes of the model
MODES = ("access", "trunk", "routed", "dot1q-tunnel", "dynamic", "unknown")
#: VTP modes (None: the OS has no VTP or it was not read)
VTP_MODES = ("server", "client", "transparent", "off")


@dataclass(frozen=True)
class PortInfo:
    """One interface as its OS configures it now.

    Attributes:
        interface: full name as in the config (``GigabitEthernet1/0/7``, ``Ethernet3``, ``ge-0/0/7``, ``A1``).
        mode: one of :data:`MODES`.
        access_vid: untagged VID of an access / dynamic / dot1q-tunnel port (IOS default 1), None otherwise.
        native_vid: untagged VID of a trunk (default 1), None otherwise.
        allowed_vids: VIDs a trunk carries tagged: sorted tuple, ``"all"``, or None (not a trunk).
        lag: name of the link aggregation group this port is a member of (``Port-channel1``, ``ae0``, ``Trk1``).
        is_lag: this interface *is* a LAG (``Port-channel1``, ``ae0``, ``Trk1``).
        mlag_peer_link: member or LAG of an MLAG / vPC / VSS peer link.
        voice_vid: voice VLAN (IOS/EOS ``switchport voice vlan``, Junos ``voip``), None if none.
        dot1x: 802.1X or MAB authentication configured on the port.
        port_security: port security / MAC limiting (sticky MACs) configured on the port.
        shutdown: administratively down.
        management: the OS's management interface (``Gi0/0``/``Management1``/``fxp0``/``em0``/``me0``).
        description: the port description, None if none.
        l2pt: link-local protocols the switch tunnels for the port (IOS ``l2protocol-tunnel``, EOS
            ``l2-protocol forwarding profile``, Junos ``layer2-control mac-rewrite``; names of
            :data:`harmless.switch_drivers.l2pt.PROTOCOLS`), in that table's order.
        unparsed: lines of the port's config the model does not understand (kept verbatim, whitespace-normalised).
    """

    interface: str
    mode: str
    access_vid: int | None = None
    native_vid: int | None = None
    allowed_vids: tuple[int, ...] | str | None = None
    lag: str | None = None
    is_lag: bool = False
    mlag_peer_link: bool = False
    voice_vid: int | None = None
    dot1x: bool = False
    port_security: bool = False
    shutdown: bool = False
    management: bool = False
    description: str | None = None
    unparsed: tuple[str, ...] = ()
    l2pt: tuple[str, ...] = ()

    def to_json_dict(self) -> dict:
        """JSON-able dict (tuples become lists); ``l2pt`` only on a port that tunnels something."""
        d = asdict(self)
        if isinstance(d["allowed_vids"], tuple):
            d["allowed_vids"] = list(d["allowed_vids"])
        d["unparsed"] = list(d["unparsed"])
        if d["l2pt"]:
            d["l2pt"] = list(d["l2pt"])
        else:
            del d["l2pt"]
        return d


@dataclass(frozen=True)
class SwitchModel:
    """A whole switch as its OS configures it now.

    Attributes:
        vtp_mode: one of :data:`VTP_MODES`, or None (no VTP on this OS / not read).
        vlans: every VID defined (``vlan N``, VLAN lists, Junos ``vlan-id-list``) or referenced anywhere (access,
            native, allowed, voice), sorted.
        ports: every interface, in config order.
        stp_mode: spanning-tree mode (``pvst``, ``rapid-pvst``, ``mst``, ``rstp``, ...), None when not read.
        stp_instance_limit: most spanning-tree instances (VLANs with PVST+) the platform runs, None when unknown.
        vlan_names: VID -> name for the VLANs that have one.
        unparsed: lines of the config the reader could not read or place on a port, each with its line number and
            the reason (``"line 12: tagged A1,B1-16 (bad ProCurve port range 'B1-16')"``); the readable rest of the
            config is in the model as usual.
        vlan_addresses: VID -> the IP addresses (no prefix length) of that VLAN's own layer-3 interface (IOS/EOS
            ``interface VlanN``, Junos ``irb``/``vlan`` unit named by ``l3-interface``, ProCurve ``vlan N`` / ``ip
            address``): what :func:`with_management` compares with the address HARMLESS manages the switch at.
    """

    vtp_mode: str | None
    vlans: tuple[int, ...]
    ports: tuple[PortInfo, ...]
    stp_mode: str | None = None
    stp_instance_limit: int | None = None
    vlan_names: dict[int, str] = field(default_factory=dict)
    unparsed: tuple[str, ...] = ()
    vlan_addresses: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def port(self, interface: str) -> PortInfo | None:
        """The port with this exact name, or None."""
        return next((p for p in self.ports if p.interface == interface), None)

    def to_json_dict(self) -> dict:
        """The ``harmless ports --json`` object (see module docstring; ``unparsed`` only when there is such a line)."""
        out = {"vtp_mode": self.vtp_mode, "vlans": list(self.vlans), "stp_mode": self.stp_mode,
               "ports": [p.to_json_dict() for p in self.ports]}
        if self.unparsed:
            out["unparsed"] = list(self.unparsed)
        return out


def management_vlans(model: SwitchModel, host: str) -> frozenset[int]:
    """The VLANs whose own layer-3 interface carries ``host``, the address HARMLESS manages the switch at (pure).

    Args:
        model: the switch's port model (its ``vlan_addresses``).
        host: the inventory's ``host``; a name (not an IP address) matches nothing (no DNS lookup here).

    Returns:
        The VIDs (usually one: the management VLAN, whose SVI answers the management session), empty when ``host``
        is on a routed or management port, or is a name.
    """
    try:
        want = ipaddress.ip_address(str(host).strip("[]"))
    except ValueError:
        return frozenset()
    out = set()
    for vid, addrs in model.vlan_addresses.items():
        for a in addrs:
            try:
                if ipaddress.ip_address(a) == want:
                    out.add(vid)
            except ValueError:
                continue
    return frozenset(out)


def with_management(model: SwitchModel, host: str) -> SwitchModel:
    """``model`` with the layer-3 interface of the management VLAN (:func:`management_vlans`) marked ``management``
    (pure): the SVI ``VlanN`` that carries the switch's own management address is the management interface as much
    as ``Management1`` is. The management VLAN itself is in ``vlans`` already (so the planner never takes its VID);
    preflight refuses migrating the access ports in it (:mod:`harmless.preflight`)."""
    vids = management_vlans(model, host)
    if not vids:
        return model
    ports = tuple(replace(p, management=True) if (m := re.fullmatch(r"(?i)vlan\s*(\d+)", p.interface))
                  and int(m.group(1)) in vids else p for p in model.ports)
    return replace(model, ports=ports)
