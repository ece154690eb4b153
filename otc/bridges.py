"""Build, verify, inspect and remove the translator (``br-otc``) and the OpenFlow bridges (``br-of-<switch>``).

Side effects only at this edge; what to build comes from the pure plan (:mod:`harmless.plan`) and flow builders
(:mod:`harmless.otc.flows`).

* Bridges, ports and patch pairs are converged in **one OVSDB transaction** (one ``ovs-vsctl`` run with ``--``
  separated commands): ``fail_mode=secure`` on both kinds of bridge (a lost controller never turns br-of into a
  learning switch), ``ofport_request`` so br-of port N is legacy port N, in-band control disabled, the configured
  OpenFlow versions, controller targets (out-of-band) and a stable datapath id. Everything HARMLESS creates carries
  ``external_ids:harmless``, which is how stale pieces are found and removed.
* The translator flows are installed with ``ovs-ofctl --bundle replace-flows`` (an OpenFlow 1.4 bundle: all or
  nothing), so br-otc never holds half a translation table.
* Link state (``docs/link-state.md``): while a legacy port's link is down, its br-of interface is switched from
  ``type=patch`` to ``type=system`` on a persistent tap of the same name that no process holds open, hence without
  carrier: the OpenFlow port keeps its number and name, its state is ``LINK_DOWN`` (not ``LIVE``), and nothing
  passes either way (the br-otc patch has no peer; the tap drops what br-of sends). :func:`set_link` switches it,
  :data:`LINK_KEY` marks it in OVSDB, :func:`apply` keeps it and :func:`remove` deletes the taps.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess

from harmless import procs
from harmless.errors import OvsError
from harmless.otc import controllers as controller_side
from harmless.otc import qos as qos_side
from harmless.otc import trunks as trunk_types
from harmless.otc.flows import (HB_BRIDGE, OTC_BRIDGE, OTC_COOKIE, heartbeat_names, heartbeat_ofport, patch_names,
                                patch_ofport, translator_flows, trunk_ofport)
from harmless.ovs import Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan

OTC_PROTOCOLS = "OpenFlow13,OpenFlow14"   # 1.4 for bundles
#: Interface ``external_ids`` key set to ``down`` while a br-of interface stands for a legacy port whose link is down
LINK_KEY = "harmless-link"
#: Interface ``external_ids`` key set to ``down`` while a controller holds the br-of port administratively down
#: (OFPT_PORT_MOD with ``OFPPC_PORT_DOWN``, :mod:`harmless.portmod`): the port is then the same placeholder, its tap
#: administratively down, so OVS reports ``config: PORT_DOWN`` as it does for any port a controller took down
ADMIN_KEY = "harmless-admin"
#: the OpenFlow port config bits a controller sets that OVS keeps on a patch port (``ovs-ofctl mod-port`` words)
CONFIG_BITS = {"NO_RECV": "no-receive", "NO_FWD": "no-forward", "NO_PACKET_IN": "no-packet-in"}


def _bridge_rows(ovs: Ovs) -> dict[str, dict]:
    return {b["name"]: b for b in ovs.vsctl_json("Bridge", columns=["name", "external_ids", "ports", "controller"])}


def _owned_ports(ovs: Ovs) -> dict[str, dict]:
    return {p["name"]: p for p in ovs.vsctl_json("Port", columns=["name", "external_ids"])
            if "harmless" in p["external_ids"]}


def _controllers(ovs: Ovs, bridge: str) -> list[str]:
    out = ovs.vsctl("get-controller", bridge).split()
    return sorted(out)


def convergence_commands(plan: Plan, bridges: dict[str, dict], owned_ports: dict[str, dict],
                         controllers: dict[str, list[str]], held_down: frozenset[str] = frozenset(),
                         resolved: dict[str, str] | None = None, admin: frozenset[str] = frozenset()
                         ) -> list[list[str]]:
    """ovs-vsctl commands (one list per command) that turn the current DB state into the plan. Pure.

    Order: stale bridges deleted, br-otc, then per switch its br-of, trunks, patch pairs and controller targets,
    last the stale ports.

    Args:
        plan: the plan to build.
        bridges: existing bridges by name (rows with ``external_ids``).
        owned_ports: existing ports that carry ``external_ids:harmless`` by name.
        controllers: current controller targets per existing br-of.
        held_down: br-of interface names whose legacy link is down (:func:`held_down`): they stay link-down
            placeholders (:func:`placeholder_commands`) instead of being turned back into patch ports.
        admin: br-of interface names a controller holds administratively down (:func:`admin_down`): placeholders
            too (their marks are kept as they are).
        resolved: ``{interface: "system"}``: ``type: auto`` trunks that must be AF_PACKET
            (:func:`harmless.otc.trunks.preselect`); other ``auto`` trunks try AF_XDP.
    """
    beat = any(sp.heartbeat_vid is not None for sp in plan.switches)
    want_bridges = {OTC_BRIDGE} | {sp.bridge for sp in plan.switches} | ({HB_BRIDGE} if beat else set())
    # stale first: bridges HARMLESS made that the plan no longer has
    cmds = [["--if-exists", "del-br", name] for name, row in bridges.items()
            if row["external_ids"].get("harmless") in ("of", "hb") and name not in want_bridges]
    cmds += _otc_bridge_commands(plan)
    for i, sp in plan.numbered():
        cmds += _of_bridge_commands(sp)
        for k, t in enumerate(sp.trunks):
            cmds += _trunk_commands(sp, t, trunk_ofport(i, k), resolved or {})
        for p in sp.ports:
            cmds += _patch_pair_commands(i, sp, p, held_down, admin)
        cmds += _heartbeat_commands(i, sp)
        cmds += _controller_commands(sp, controllers.get(sp.bridge, []))
    want_ports = _wanted_ports(plan)
    for name, row in owned_ports.items():
        br_owned = row["external_ids"].get("harmless")
        if name not in want_ports and name not in want_bridges and br_owned not in ("otc",):
            cmds.append(["--if-exists", "del-port", name])
    return cmds


def _wanted_ports(plan: Plan) -> set[str]:
    """Every port name the plan puts on a bridge: trunk interfaces and both ends of every patch pair. Pure."""
    want = {t.server_interface for sp in plan.switches for t in sp.trunks}
    for sp in plan.switches:
        for p in sp.ports:
            want |= set(patch_names(sp.name, p.ofport))
        if sp.heartbeat_vid is not None:
            want |= set(heartbeat_names(sp.name))
    return want


def heartbeat_mac(server: str | None, switch: str) -> str:
    """The source MAC of one server's BFD packets for one switch: locally administered (02:...), stable, different
    per server and switch (so the legacy switch learns each server's heartbeat on its own trunk). Pure."""
    h = hashlib.sha1(f"harmless-hb:{server}:{switch}".encode()).hexdigest()
    return "02:" + ":".join(h[k:k + 2] for k in range(0, 10, 2))


def _heartbeat_commands(i: int, sp: SwitchPlan) -> list[list[str]]:
    """``br-hb`` and the heartbeat patch pair of ``sp`` (switch number ``i``) with BFD on its br-hb side (OVS
    ``Interface:bfd``, ovs-vswitchd.conf.db(5) "BFD Configuration"; RFC 5880): ``min_tx``/``min_rx`` the heartbeat
    interval, ``mult`` the detect multiplier, no decay (an idle heartbeat VLAN must keep its interval). [] without a
    heartbeat VLAN. Pure."""
    if sp.heartbeat_vid is None:
        return []
    otc_side, hb_side = heartbeat_names(sp.name)
    ms = sp.heartbeat_ms
    return [["--may-exist", "add-br", HB_BRIDGE],
            ["set", "Bridge", HB_BRIDGE, "datapath_type=netdev", "fail_mode=secure",
             "other_config:disable-in-band=true", "external_ids:harmless=hb"],
            ["--may-exist", "add-port", OTC_BRIDGE, otc_side],
            ["set", "Interface", otc_side, "type=patch", f"options:peer={hb_side}",
             f"ofport_request={heartbeat_ofport(i)}"],
            ["set", "Port", otc_side, f"external_ids:harmless={sp.name}", "external_ids:harmless-port=heartbeat"],
            ["--may-exist", "add-port", HB_BRIDGE, hb_side],
            ["set", "Interface", hb_side, "type=patch", f"options:peer={otc_side}", "bfd:enable=true",
             f"bfd:min_tx={ms}", f"bfd:min_rx={ms}", f"bfd:mult={sp.heartbeat_mult}", "bfd:decay_min_rx=0",
             f"bfd:bfd_local_src_mac={heartbeat_mac(sp.server, sp.name)}"],
            ["set", "Port", hb_side, f"external_ids:harmless={sp.name}", "external_ids:harmless-port=heartbeat"]]


def _otc_bridge_commands(plan: Plan) -> list[list[str]]:
    """br-otc itself (and the VLAN limit that QinQ needs). Pure."""
    cmds = []
    if any(sp.has_qinq for sp in plan.switches):   # parse the C-tag under the S-tag (see flows module doc)
        cmds.append(["set", "Open_vSwitch", ".", "other_config:vlan-limit=2"])
    cmds.append(["--may-exist", "add-br", OTC_BRIDGE])
    cmds.append(["set", "Bridge", OTC_BRIDGE, "datapath_type=netdev", "fail_mode=secure",
                 f"protocols={OTC_PROTOCOLS}", "other_config:disable-in-band=true", "external_ids:harmless=otc"])
    cmds.append(["set", "Port", OTC_BRIDGE, "external_ids:harmless=otc"])
    return cmds


def _of_bridge_commands(sp: SwitchPlan) -> list[list[str]]:
    """One switch's br-of bridge (without its ports). Pure."""
    br = sp.bridge
    return [["--may-exist", "add-br", br],
            ["set", "Bridge", br, "datapath_type=netdev", "fail_mode=secure",
             "protocols=" + ",".join(sp.protocols), f"other_config:datapath-id={sp.datapath_id}",
             "other_config:disable-in-band=true", "external_ids:harmless=of",
             f"external_ids:harmless-switch={sp.name}"],
            ["set", "Port", br, f"external_ids:harmless={sp.name}"]]


def _trunk_commands(sp: SwitchPlan, t: TrunkPlan, ofport: int, resolved: dict[str, str]) -> list[list[str]]:
    """Trunk ``t`` of ``sp`` as br-otc port ``ofport`` with its interface type and options. Pure."""
    cmds = [["--may-exist", "add-port", OTC_BRIDGE, t.server_interface]]
    typ, opts = trunk_types.interface_settings(t, resolved)
    cmds.append(["set", "Interface", t.server_interface, f"ofport_request={ofport}", "type=" + typ,
                 *[f"options:{k}={v}" for k, v in opts]])
    if t.type == "auto" and typ != "afxdp":        # an auto trunk back on AF_PACKET: no AF_XDP option left
        cmds.append(["remove", "Interface", t.server_interface, "options", "xdp-mode"])
    cmds.append(["set", "Port", t.server_interface, f"external_ids:harmless={sp.name}",
                 f"external_ids:harmless-trunk={t.switch_port}"])
    return cmds


def _patch_pair_commands(i: int, sp: SwitchPlan, p: PortPlan, held_down: frozenset[str],
                         admin: frozenset[str] = frozenset()) -> list[list[str]]:
    """The patch pair of migrated port ``p`` (switch number ``i``): br-otc side, br-of side (or its placeholder when
    ``held_down`` or ``admin`` has it, with the marks it has). Pure."""
    otc_side, of_side = patch_names(sp.name, p.ofport)
    cmds = [["--may-exist", "add-port", OTC_BRIDGE, otc_side],
            ["set", "Interface", otc_side, "type=patch", f"options:peer={of_side}",
             f"ofport_request={patch_ofport(i, p.ofport)}"],
            ["set", "Port", otc_side, f"external_ids:harmless={sp.name}", f"external_ids:harmless-port={p.interface}"],
            ["--may-exist", "add-port", sp.bridge, of_side]]
    if of_side in held_down or of_side in admin:
        cmds += placeholder_commands(of_side, p.ofport, tuple(k for k, names in ((LINK_KEY, held_down),
                                                                                  (ADMIN_KEY, admin))
                                                               if of_side in names))
    else:
        cmds.append(["set", "Interface", of_side, "type=patch", f"options:peer={otc_side}",
                     f"ofport_request={p.ofport}"])
    cmds.append(["set", "Port", of_side, f"external_ids:harmless={sp.name}",
                 f"external_ids:harmless-port={p.interface}"])
    return cmds


def _controller_commands(sp: SwitchPlan, current: list[str]) -> list[list[str]]:
    """``set-controller``/``del-controller`` for ``sp``'s br-of when its targets differ from ``current``. Pure."""
    want = sp.live_controllers               # a standby server's br-of connects to nobody
    if sorted(want) == sorted(current):
        return []
    if want:
        return [["set-controller", sp.bridge, *want]]
    return [["del-controller", sp.bridge]]


def apply(ovs: Ovs, plan: Plan) -> list[trunk_types.TrunkChoice]:
    """Converge OVS to the plan: one OVSDB transaction, then the translator flows as one bundle.

    Idempotent (a second call changes nothing); repairs bridges and flows after an ovs-vswitchd restart.
    Trunks of ``type: auto`` try AF_XDP and fall back to AF_PACKET (:mod:`harmless.otc.trunks`); what each became
    is returned (one line each via ``TrunkChoice.line()``).

    Raises:
        OvsError: the transaction or the bundle failed (nothing of that step is applied).
    """
    bridges = _bridge_rows(ovs)
    ctl = {sp.bridge: _controllers(ovs, sp.bridge) for sp in plan.switches if sp.bridge in bridges}
    held, admin = held_down(ovs), admin_down(ovs)
    wanted = {patch_names(sp.name, p.ofport)[1] for sp in plan.switches for p in sp.ports}
    for name in sorted((held | admin) & wanted):   # a reboot or a restore at boot loses the taps, OVSDB the marks
        _ensure_tap(ovs, name, up=name not in admin)
    resolved = trunk_types.preselect(ovs, plan)
    cmds = convergence_commands(plan, bridges, _owned_ports(ovs), ctl, frozenset(held & wanted), resolved,
                                frozenset(admin & wanted))
    controller_side.apply_tls(ovs, plan)          # before the targets: ssl: connections need it (issue #13)
    ovs.transact(cmds, timeout=60)
    choices = trunk_types.settle(ovs, plan, resolved)
    for name in sorted((held | admin) - wanted):      # ports that left the plan while held down
        _delete_tap(ovs, name)
    # out-of-band controller connections (in-band needs the LOCAL port to route to the controller), reconnect
    # backoff and inactivity probe from the inventory
    controller_side.apply_settings(ovs, plan)
    stale_meters = qos_side.apply_before_flows(ovs, plan)   # meters and queues the flows refer to (docs/qos.md)
    install_flows(ovs, plan)
    qos_side.prune_meters(ovs, stale_meters)
    return choices


def activation_commands(sp: SwitchPlan, current: list[str]) -> list[list[str]]:
    """ovs-vsctl commands giving ``sp``'s br-of its live controllers (none on a standby) WITH their settings
    (out-of-band, ``max_backoff``, ``inactivity_probe``) in the rows' creation, so that ovs-vswitchd connects once,
    instead of connecting and then reconnecting when the settings are written afterwards. Pure."""
    want = sp.live_controllers
    if sorted(want) == sorted(current):
        return []
    if not want:
        return [["del-controller", sp.bridge]]
    cmds = [[f"--id=@c{k}", "create", "Controller", f'target="{t}"', "connection_mode=out-of-band",
             f"max_backoff={sp.max_backoff_ms}", f"inactivity_probe={sp.inactivity_probe_ms}"]
            for k, t in enumerate(want)]
    return cmds + [["set", "Bridge", sp.bridge, "controller=[" + ",".join(f"@c{k}" for k in range(len(want))) + "]"]]


def set_controllers(ovs: Ovs, plan: Plan) -> None:
    """Only each br-of's controller targets (:attr:`harmless.plan.SwitchPlan.live_controllers`: none on a standby),
    created with their settings in one transaction (:func:`activation_commands`): the quick step of a standby
    server becoming active (docs/high-availability.md), before :func:`apply` converges the rest.

    Raises:
        OvsError: the transaction failed.
    """
    current = {sp.bridge: _controllers(ovs, sp.bridge) for sp in plan.switches}
    ovs.transact([c for sp in plan.switches for c in activation_commands(sp, current[sp.bridge])])


def install_flows(ovs: Ovs, plan: Plan) -> None:
    """Replace all br-otc flows with the plan's translator flows in one OpenFlow bundle (atomic)."""
    text = "\n".join(f.to_ofctl() for f in translator_flows(plan)) + "\n"
    ovs.ofctl("-O", "OpenFlow14", "--bundle", "replace-flows", OTC_BRIDGE, "-", stdin=text)


def verify(ovs: Ovs, plan: Plan) -> list[str]:
    """Check the built state against the plan; return a list of problems (empty = verified).

    Checks: every br-of port has its requested OpenFlow port number and no interface error; every trunk
    interface exists without error; both bridges are fail_mode=secure; br-otc holds exactly the translator flows.
    """
    problems = []
    ifaces = {r["name"]: r for r in ovs.vsctl_json("Interface", columns=["name", "ofport", "error", "link_state"])}
    brs = {r["name"]: r for r in ovs.vsctl_json("Bridge", columns=["name", "fail_mode"])}
    for br in [OTC_BRIDGE] + [sp.bridge for sp in plan.switches]:
        if br not in brs:
            problems.append(f"bridge {br} is missing")
        elif brs[br]["fail_mode"] != "secure":
            problems.append(f"bridge {br} is not fail_mode=secure")
    for i, sp in plan.numbered():
        for k, t in enumerate(sp.trunks):
            r = ifaces.get(t.server_interface)
            if r is None or r["ofport"] in (-1, []):
                err = r["error"] if r and r["error"] else "not attached"
                problems.append(f"trunk {t.server_interface}: {err}")
            elif r["ofport"] != trunk_ofport(i, k):
                problems.append(f"trunk {t.server_interface} is br-otc port {r['ofport']}, not {trunk_ofport(i, k)}")
        for p in sp.ports:
            _, of_side = patch_names(sp.name, p.ofport)
            r = ifaces.get(of_side)
            if r is None or r["ofport"] != p.ofport:
                problems.append(f"{sp.bridge} port {of_side} is OpenFlow port "
                                f"{r['ofport'] if r else 'missing'}, not {p.ofport}")
    want = {f.to_ofctl().split(",", 1)[1] for f in translator_flows(plan)}
    got = set()
    for line in ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", OTC_BRIDGE,
                          f"cookie={OTC_COOKIE:#x}/-1").splitlines():
        if "actions=" in line:
            got.add(line.strip())
    if len(got) != len(want):
        problems.append(f"br-otc holds {len(got)} translator flows, expected {len(want)}")
    return problems


def remove(ovs: Ovs, bridges: list[str]) -> None:
    """Delete br-otc and the given br-of bridges in one transaction (idempotent).

    Trunk interfaces are only detached from OVS, never deleted; the taps of link-down placeholders are deleted; the
    SSL configuration is removed when HARMLESS set it.
    """
    try:
        held = held_down(ovs) | admin_down(ovs)
    except OvsError:
        held = set()
    # QoS/Queue rows are root rows: destroyed explicitly (no orphans), in a transaction of their own (ovs-vsctl
    # drops the `clear Port qos` of a port that a del-br in the same transaction deletes)
    qos_cmds = qos_side.remove_commands(ovs)
    ovs.transact(qos_cmds)
    hb = [HB_BRIDGE] if _bridge_rows(ovs).get(HB_BRIDGE, {}).get("external_ids", {}).get("harmless") == "hb" else []
    ovs.transact([*[["--if-exists", "del-br", br] for br in [*bridges, OTC_BRIDGE, *hb]],
                  *controller_side.tls_commands(None, controller_side.current_ssl(ovs))], timeout=60)
    for name in sorted(held):
        _delete_tap(ovs, name)


# ---------------------------------------------------------------------------- link state of br-of ports
def placeholder_commands(of_side: str, ofport: int, marks: tuple[str, ...] = (LINK_KEY,)) -> list[list[str]]:
    """ovs-vsctl commands that turn br-of interface ``of_side`` into its placeholder. Pure.

    The interface becomes ``type=system`` on the persistent tap of the same name (:func:`set_link` /
    :func:`set_admin` create it), keeps ``ofport_request`` (so the OpenFlow port number and name stay) and gets the
    ``marks`` (:data:`LINK_KEY`: watch holds it link-down; :data:`ADMIN_KEY`: a controller holds it down), each
    ``=down``.
    """
    return [["set", "Interface", of_side, "type=system", f"ofport_request={ofport}",
             *[f"external_ids:{k}=down" for k in marks]],
            ["clear", "Interface", of_side, "options"]]


def patch_commands(sp: SwitchPlan, ofport: int) -> list[list[str]]:
    """ovs-vsctl commands that make br-of port ``ofport`` the patch port towards br-otc again (link up, no
    controller holding it down): both marks removed. Pure."""
    otc_side, of_side = patch_names(sp.name, ofport)
    return [["set", "Interface", of_side, "type=patch", f"options:peer={otc_side}", f"ofport_request={ofport}"],
            ["remove", "Interface", of_side, "external_ids", LINK_KEY],
            ["remove", "Interface", of_side, "external_ids", ADMIN_KEY]]


def marks(ovs: Ovs) -> dict[str, set[str]]:
    """``{interface: {mark keys set to down}}`` for every interface carrying :data:`LINK_KEY` or :data:`ADMIN_KEY`."""
    out = {}
    for r in ovs.vsctl_json("Interface", columns=["name", "external_ids"]):
        ids = r["external_ids"] or {}
        got = {k for k in (LINK_KEY, ADMIN_KEY) if ids.get(k) == "down"}
        if got:
            out[r["name"]] = got
    return out


def held_down(ovs: Ovs) -> set[str]:
    """Names of the interfaces HARMLESS holds link-down (``external_ids:harmless-link=down``), all bridges."""
    return {n for n, m in marks(ovs).items() if LINK_KEY in m}


def admin_down(ovs: Ovs) -> set[str]:
    """Names of the interfaces a controller holds administratively down (``external_ids:harmless-admin=down``)."""
    return {n for n, m in marks(ovs).items() if ADMIN_KEY in m}


def set_link(ovs: Ovs, sp: SwitchPlan, ofport: int, up: bool) -> None:
    """Show the legacy link of br-of port ``ofport`` of ``sp`` as down (``up=False``) or up to every controller.

    Down: a persistent tap named like the br-of interface is created (up, no carrier: no process holds it open) and
    the interface is switched to it in one OVSDB transaction; OVS sends OFPT_PORT_STATUS DELETE, then ADD with
    ``OFPPS_LINK_DOWN``, same port number and name; then the tap takes the port's previous MAC address, which makes
    OVS send a MODIFY with ``OFPPS_LINK_DOWN`` too. Up: back to the patch port (DELETE, ADD, MODIFY with
    ``OFPPS_LIVE``), then the tap is deleted. ovs-vsctl returns once ovs-vswitchd has applied the change, i.e. after
    the port-status messages are queued to the controllers. Idempotent.

    A port a controller holds down (:func:`set_admin`) is already a placeholder: only the mark changes (it stays
    down until the controller clears ``PORT_DOWN`` too). The controller's ``NO_RECV``/``NO_FWD``/``NO_PACKET_IN``
    bits survive the swap (re-applied after it, as a port keeps its config across a link flap).

    Raises:
        OvsError: the transaction failed, or a device of the interface's name exists that is not a tap or has
            carrier (someone else owns that name).
    """
    of_side = patch_names(sp.name, ofport)[1]
    have = marks(ovs).get(of_side, set())
    if up and ADMIN_KEY in have:
        ovs.transact([["remove", "Interface", of_side, "external_ids", LINK_KEY]])
    elif up:
        _to_patch(ovs, sp, ofport)
    elif have:
        ovs.transact([["set", "Interface", of_side, f"external_ids:{LINK_KEY}=down"]])
    else:
        _to_placeholder(ovs, sp, ofport, LINK_KEY, tap_up=True)


def set_admin(ovs: Ovs, sp: SwitchPlan, ofport: int, down: bool, have: dict[str, set[str]] | None = None) -> None:
    """Hold br-of port ``ofport`` of ``sp`` administratively down (``down=True``) for a controller, or release it.

    Down: the port becomes the placeholder (as for a link down, :func:`set_link`) on a tap that is administratively
    down, marked :data:`ADMIN_KEY`; OVS reads the tap's flags and reports ``config: PORT_DOWN`` and ``state:
    LINK_DOWN`` (DELETE, ADD, MODIFY), and nothing passes either way. On a port watch already holds link-down only
    the tap goes down (OVS sends a MODIFY with ``PORT_DOWN``) and the mark is added. Up: the tap goes up (OVS:
    MODIFY, ``PORT_DOWN`` cleared) and the mark is removed; while watch still holds the link down the port stays
    the placeholder (``LINK_DOWN``, as a hardware port whose link is still coming up), else it is the patch port
    again (``LIVE``). The tap changes first and the mark second, so a crash in between leaves what the controller
    asked for readable from the tap (:func:`tap_flags`). Idempotent.

    Args:
        have: :func:`marks` as the caller just read them (saves reading them again: the port-mod's latency).

    Raises:
        OvsError: as :func:`set_link`.
    """
    of_side = patch_names(sp.name, ofport)[1]
    have = (marks(ovs) if have is None else have).get(of_side, set())
    if down and have:
        _ip(ovs, "link", "set", "dev", of_side, "down")
        ovs.transact([["set", "Interface", of_side, f"external_ids:{ADMIN_KEY}=down"]])
    elif down:
        _admin_placeholder(ovs, sp, ofport)
    elif LINK_KEY in have:
        _ip(ovs, "link", "set", "dev", of_side, "up")
        ovs.transact([["remove", "Interface", of_side, "external_ids", ADMIN_KEY]])
    else:
        _to_patch(ovs, sp, ofport)


def _to_placeholder(ovs: Ovs, sp: SwitchPlan, ofport: int, key: str, tap_up: bool) -> None:
    """Swap br-of port ``ofport`` from its patch port to its tap placeholder marked ``key`` (see :func:`set_link`)."""
    of_side = patch_names(sp.name, ofport)[1]
    rows = ovs.vsctl_json("Interface", of_side, columns=["mac_in_use"]) if of_side in _iface_names(ovs) else []
    mac = rows[0]["mac_in_use"] if rows and isinstance(rows[0]["mac_in_use"], str) else ""
    bits = config_bits(ovs, sp, ofport)
    _ensure_tap(ovs, of_side, up=tap_up)
    try:
        ovs.transact(placeholder_commands(of_side, ofport, (key,)))
    except OvsError:
        _delete_tap(ovs, of_side)          # nothing changed in OVS: leave no tap behind
        raise
    # Give the tap the port's previous address: the port keeps its hw_addr, and the change makes OVS send a
    # port-status MODIFY (state LINK_DOWN) after the ADD. Controllers that take any ADD for "port up" (Faucet 1.10:
    # valve.port_status_handler) act on this MODIFY and take the port down.
    if mac and (_link_info(ovs, of_side) or {}).get("address") != mac:
        _ip(ovs, "link", "set", "dev", of_side, "address", mac)
    _restore_bits(ovs, sp, ofport, bits)


def _admin_placeholder(ovs: Ovs, sp: SwitchPlan, ofport: int) -> None:
    """Swap patch port ``ofport`` to its placeholder for a controller's port-down, in as few steps as it takes (the
    port-mod's latency: five commands). The tap has the port's address and is up when OVS adds it (port-status
    DELETE, then ADD: config 0, state LINK_DOWN), then goes down (MODIFY: config PORT_DOWN; the MODIFY is what
    Faucet acts on, see :func:`_to_placeholder`). The hardware address never changes meanwhile, so a controller
    that sends its port-mod again (Faucet does, every second until the port status matches) always names the one
    OVS has (OVS refuses another with OFPPMFC_BAD_HW_ADDR, which Faucet logs as an error)."""
    of_side = patch_names(sp.name, ofport)[1]
    mac, bits = port_desc_one(ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", sp.bridge, str(ofport)), ofport)
    if _ip(ovs, "tuntap", "add", "dev", of_side, "mode", "tap", check=False).returncode != 0:
        _ensure_tap(ovs, of_side)                  # exists already: it must be our tap, without carrier
    _ip(ovs, "link", "set", "dev", of_side, *(["address", mac] if mac else []), "up")
    try:
        ovs.transact(placeholder_commands(of_side, ofport, (ADMIN_KEY,)))
    except OvsError:
        _delete_tap(ovs, of_side)
        raise
    _ip(ovs, "link", "set", "dev", of_side, "down")
    _restore_bits(ovs, sp, ofport, bits)


def port_desc_one(text: str, ofport: int) -> tuple[str, set[str]]:
    """``(hw_addr, controller config bits)`` of port ``ofport`` in ``ovs-ofctl dump-ports-desc`` output
    (``("", set())`` when it is not there; OpenFlow 1.3's port description has no port filter, so ovs-ofctl may
    print every port). Pure."""
    m = re.search(rf"^\s*{ofport}\([^)]*\): addr:([0-9a-f:]{{17}})", text, re.M)
    desc = parse_ports_desc(text).get(ofport)
    return (m.group(1) if m else ""), (set(desc["config"]) & set(CONFIG_BITS) if desc else set())


def _to_patch(ovs: Ovs, sp: SwitchPlan, ofport: int) -> None:
    """Swap br-of port ``ofport`` back to its patch port (both marks removed) and delete the tap."""
    bits = config_bits(ovs, sp, ofport)
    ovs.transact(patch_commands(sp, ofport))
    _delete_tap(ovs, patch_names(sp.name, ofport)[1])
    _restore_bits(ovs, sp, ofport, bits)


def config_bits(ovs: Ovs, sp: SwitchPlan, ofport: int) -> set[str]:
    """The controller's ``NO_RECV``/``NO_FWD``/``NO_PACKET_IN`` bits on br-of port ``ofport`` now (empty when the
    port is missing)."""
    desc = parse_ports_desc(ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", sp.bridge, str(ofport)))
    return set(desc.get(ofport, {}).get("config", set())) & set(CONFIG_BITS)


def _restore_bits(ovs: Ovs, sp: SwitchPlan, ofport: int, bits: set[str]) -> None:
    """Set ``bits`` again on the port OVS re-created (a new OpenFlow port starts with config 0)."""
    for b in sorted(bits):
        ovs.ofctl("-O", "OpenFlow13", "mod-port", sp.bridge, str(ofport), CONFIG_BITS[b])


def tap_flags(ovs: Ovs, names: set[str]) -> dict[str, bool]:
    """``{tap: administratively up}`` for those of ``names`` that exist (one ``ip -j link`` call): a controller's
    port-mod on a placeholder port reaches its tap's IFF_UP flag at once (OVS ``netdev_turn_flags_off``)."""
    if not names:
        return {}
    p = _ip(ovs, "-j", "link", "show", check=False)
    rows = json.loads(p.stdout or "[]") if p.returncode == 0 else []
    return {r["ifname"]: "UP" in r.get("flags", []) for r in rows if r.get("ifname") in names}
def parse_ports_desc(text: str) -> dict[int, dict]:
    """Parse ``ovs-ofctl -O OpenFlow13 dump-ports-desc BRIDGE``. Pure.

    Returns:
        ``{ofport: {"name": str, "config": set[str], "state": set[str]}}``, flags as ovs-ofctl prints them
        (config ``PORT_DOWN``, ``NO_RECV``, ``NO_FWD``, ``NO_PACKET_IN``; state ``LINK_DOWN``, ``BLOCKED``, ``LIVE``),
        empty sets for ``0``; LOCAL is skipped.
    """
    out: dict[int, dict] = {}
    port = None
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\(([^)]*)\):", line)
        if m:
            port = int(m.group(1))
            out[port] = {"name": m.group(2), "config": set(), "state": set()}
            continue
        if re.match(r"^\s*LOCAL\(", line):
            port = None
            continue
        m = re.match(r"^\s*(config|state):\s*(.*)$", line)
        if m and port is not None:
            out[port][m.group(1)] = {f for f in m.group(2).split() if f != "0"}
    return out


def link_view(ovs: Ovs, sp: SwitchPlan) -> dict[int, dict]:
    """What a controller sees of each migrated port's link on ``sp``'s br-of, and whether HARMLESS holds it down.

    Returns:
        ``{ofport: {"br_of_state": "LIVE" | "LINK_DOWN" | ... (space-separated OFPPS flags, "0" for none,
        "missing" when the port is not on br-of), "br_of_config": [OFPPC flags, e.g. "PORT_DOWN" set by a
        controller], "blocked_by_watch": bool, "admin_down": bool (a controller's OFPPC_PORT_DOWN that HARMLESS
        holds, :func:`set_admin`)}}``.
    """
    desc = parse_ports_desc(ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", sp.bridge))
    have = marks(ovs)
    out = {}
    for p in sp.ports:
        d = desc.get(p.ofport)
        m = have.get(patch_names(sp.name, p.ofport)[1], set())
        out[p.ofport] = {"br_of_state": (" ".join(sorted(d["state"])) or "0") if d else "missing",
                         "br_of_config": sorted(d["config"]) if d else [],
                         "blocked_by_watch": LINK_KEY in m, "admin_down": ADMIN_KEY in m}
    return out


def _iface_names(ovs: Ovs) -> set[str]:
    return {r["name"] for r in ovs.vsctl_json("Interface", columns=["name"])}


def _ip(ovs: Ovs, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``ip`` in the server OVS's network namespace (``ip -n``); a failure (``check``) is an :class:`OvsError`."""
    argv = ["ip", *(["-n", ovs.netns] if ovs.netns else []), *args]
    return procs.run(argv, check=check, error=OvsError, where=" ".join(argv[:5]),
                     fix="check the server's network namespace and interface names")


def _link_info(ovs: Ovs, name: str) -> dict | None:
    p = _ip(ovs, "-j", "-d", "link", "show", "dev", name, check=False)
    if p.returncode != 0:
        return None
    rows = json.loads(p.stdout or "[]")
    return rows[0] if rows else None


def _ensure_tap(ovs: Ovs, name: str, up: bool = True) -> None:
    """A persistent tap ``name`` without carrier (nobody attached), administratively up (``up``) or down (a
    controller holds the port down: OVS reads the flag as ``config: PORT_DOWN``)."""
    info = _link_info(ovs, name)
    if info is None:
        _ip(ovs, "tuntap", "add", "dev", name, "mode", "tap")
    elif (info.get("linkinfo") or {}).get("info_kind") != "tun":
        raise OvsError(name, "a network device of this name exists and is not a tap",
                       "rename or delete it: HARMLESS names the link-down placeholder of a br-of port like the port")
    _ip(ovs, "link", "set", "dev", name, "up" if up else "down")
    if not up:
        return                      # a tap that is down has no carrier whoever holds it
    info = _link_info(ovs, name) or {}
    if "NO-CARRIER" not in info.get("flags", []):
        raise OvsError(name, "the tap has carrier (a process holds it open), so it cannot show the link down",
                       "stop whatever attached to it, or delete the device")


def _delete_tap(ovs: Ovs, name: str) -> None:
    info = _link_info(ovs, name)
    if info is not None and (info.get("linkinfo") or {}).get("info_kind") == "tun":
        _ip(ovs, "link", "del", "dev", name, check=False)


def port_status(ovs: Ovs, sp: SwitchPlan) -> dict:
    """Counters and state of one switch's bridge.

    Returns:
        ``{"ports": {ofport: {"name", "rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "br_of_state",
        "br_of_config", "blocked_by_watch"}},
        "controllers": [{"target", "is_connected", "role", "state", "last_error", ["tls_log"]}],
        "trunks": {iface: {"link_state", "rx_packets", "tx_packets", "error", "type", "xdp_mode", "auto",
        "why"}}}`` (``type`` the OVS interface type in use: system = AF_PACKET, afxdp, dpdk...).
    """
    ifaces = {r["name"]: r for r in ovs.vsctl_json("Interface", columns=["name", "statistics", "link_state",
                                                                           "error", "ofport", "type",
                                                                           "external_ids"])}
    live = parse_dump_ports(ovs.ofctl("-O", "OpenFlow13", "dump-ports", sp.bridge))   # OVSDB stats lag by 5 s
    links = link_view(ovs, sp)
    ports = {}
    for p in sp.ports:
        _, of_side = patch_names(sp.name, p.ofport)
        c = live.get(p.ofport, {})
        ports[p.ofport] = {"name": of_side, **{k: c.get(k, 0) for k in
                                               ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes")},
                           **links[p.ofport]}
    trunks = {}
    otc_live = parse_dump_ports(ovs.ofctl("-O", "OpenFlow13", "dump-ports", OTC_BRIDGE))
    for t in sp.trunks:
        r = ifaces.get(t.server_interface, {})
        c = otc_live.get(r.get("ofport"), {}) if isinstance(r.get("ofport"), int) else {}
        trunks[t.server_interface] = {"link_state": r.get("link_state") or "unknown",
                                      "error": r.get("error") or None,
                                      "rx_packets": c.get("rx_packets", 0), "tx_packets": c.get("tx_packets", 0),
                                      **trunk_types.describe(ovs, t.server_interface, r)}
    ctls = []
    uuids = ovs.vsctl("get", "Bridge", sp.bridge, "controller").strip().strip("[]").replace(" ", "")
    for u in filter(None, uuids.split(",")):
        r = ovs.vsctl_json("Controller", u, columns=["target", "is_connected", "role", "status"])[0]
        ctls.append({"target": r["target"], "is_connected": bool(r["is_connected"]),
                     "role": r["role"] or "-", "state": (r["status"] or {}).get("state", "-"),
                     "last_error": (r["status"] or {}).get("last_error")})
    for c in ctls:     # why a TLS connection fails: the ovs-vswitchd log's stream_ssl lines (issue #13)
        if c["target"].startswith("ssl:") and not c["is_connected"]:
            c["tls_log"] = controller_side.tls_log_lines(ovs, 3)
    return {"ports": ports, "controllers": ctls, "trunks": trunks}


def parse_dump_ports(text: str) -> dict[int, dict[str, int]]:
    """Parse ``ovs-ofctl dump-ports`` output into ``{port_no: {"rx_packets", "rx_bytes", "tx_packets",
    "tx_bytes"}}`` (LOCAL is skipped). Pure."""
    out: dict[int, dict[str, int]] = {}
    cur = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("port"):
            head, _, rest = s.partition(":")
            no = head.split()[-1].strip('"')
            cur = int(no) if no.isdigit() else None
            s = rest.strip()
            if cur is not None:
                out[cur] = {}
        if cur is None:
            continue
        for direction in ("rx", "tx"):
            if s.startswith(direction + " "):
                fields = dict(kv.split("=", 1) for kv in s[3:].replace(" ", "").split(",") if "=" in kv)
                for src, dst in (("pkts", "packets"), ("bytes", "bytes")):
                    v = fields.get(src, "0")
                    out[cur][f"{direction}_{dst}"] = int(v) if v.isdigit() else 0
    return out


def otc_hairpinned_packets(ovs: Ovs) -> int:
    """Packets the translator took off the trunk(s) into br-of (sum of n_packets of the pop_vlan flows)."""
    total = 0
    for line in ovs.ofctl("-O", "OpenFlow14", "dump-flows", OTC_BRIDGE, f"cookie={OTC_COOKIE:#x}/-1").splitlines():
        if "pop_vlan" in line and "n_packets=" in line:
            total += int(line.split("n_packets=")[1].split(",")[0])
    return total
