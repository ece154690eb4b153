"""Deployment access: the one way to reach a deployment's legacy switches and its server Open vSwitch.

Layer (docs/development.md): above the inventory and the persisted state, below planning and the commands. Every
command that talks to a switch or to the server OVS of a deployment goes through here:

* :func:`connect`: open a driver session to one inventory switch (:func:`connect_deployed`: to a switch recorded
  in the state);
* :func:`server_ovs`: the OVS instance an inventory's ``server:`` asks for (system or private, netdev or DPDK);
* :func:`ovs_ref` / :func:`ovs_from_ref`: an instance as recorded in ``state.json`` (:class:`harmless.state.OvsRef`,
  with its DPDK options) and back;
* :func:`state_ovs`: the instance of a deployment state, with the DPDK options it was started with.
"""
from __future__ import annotations

from pathlib import Path

from harmless import state as st
from harmless.errors import DeviceError, HarmlessError
from harmless.inventory import Inventory, Switch, load_inventory
from harmless.ovs import DpdkOptions, Ovs, open_ovs
from harmless.state import DeploymentState, DpdkRef, OvsRef
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.base import SwitchDriver


def connect(sw: Switch, where: str, password: str | None = None) -> SwitchDriver:
    """Open a driver session to one switch.

    Args:
        sw: the inventory entry.
        where: what to name in an error (``<inventory>: switches[i]``).
        password: the resolved password (None: resolve ``sw``'s reference now).

    Raises:
        InputError: the secret reference cannot be resolved.
        DeviceError: the switch is unreachable or refuses the login (nothing was changed).
    """
    cls = get_driver(sw.driver)
    drv = cls(sw.host, sw.port, sw.username, password if password is not None else sw.password(where),
              optional_args=sw.optional_args, timeout=sw.command_timeout_s)
    try:
        drv.open()
    except DeviceError as e:
        raise DeviceError(f"{where}.host", f"cannot reach {sw.name} at {sw.host}:{sw.port} ({e.problem})",
                          "check host, port, username and the password reference; nothing was changed") from None
    return drv


def deployed_switch(s: DeploymentState, name: str) -> Switch:
    """The inventory entry of a switch recorded in the state (its non-secret record). Raises KeyError."""
    return Switch.model_validate(s.switches[name])


def connect_deployed(s: DeploymentState, name: str) -> SwitchDriver:
    """Open a driver session to a switch of the deployment (as :func:`connect`)."""
    return connect(deployed_switch(s, name), f"{s.inventory}: switch {name}")


def dpdk_options(inv: Inventory) -> DpdkOptions | None:
    """The DPDK options of the inventory's ``server.dpdk`` (None unless ``server.datapath`` is ``dpdk``)."""
    if inv.server.datapath != "dpdk":
        return None
    d = inv.server.dpdk
    return DpdkOptions(hugepages=d.hugepages, socket_mem_mb=d.socket_mem_mb, lcore_mask=d.lcore_mask,
                       pmd_cpu_mask=d.pmd_cpu_mask)


def server_ovs(inv: Inventory, start: bool = True) -> Ovs:
    """The server's OVS instance per ``server:`` (system or private, netdev or DPDK).

    Raises:
        OvsError: ``system`` requested but none runs; a daemon failed to start.
    """
    return open_ovs(inv.server.ovs, st.state_dir() / "ovs", dpdk=dpdk_options(inv), start=start,
                    netns=inv.server.netns)


def ovs_ref(ovs: Ovs, datapath: str) -> OvsRef:
    """How ``state.json`` records an instance (with its DPDK options when it has them)."""
    dp = ovs.dpdk
    return OvsRef(private=ovs.private, base_dir=str(ovs.base_dir) if ovs.private else None, netns=ovs.netns,
                  datapath=datapath,
                  dpdk=DpdkRef(hugepages=dp.hugepages, socket_mem_mb=dp.socket_mem_mb, lcore_mask=dp.lcore_mask,
                               pmd_cpu_mask=dp.pmd_cpu_mask) if dp is not None else None)


def ref_record(ref: OvsRef) -> dict:
    """The instance as the journal records it (``private``, ``base_dir``, ``netns``, ``datapath``)."""
    return ref.model_dump(mode="json", exclude={"dpdk"})


def ovs_from_ref(ref: OvsRef | dict | None, dpdk: DpdkOptions | None = None) -> Ovs:
    """The instance a state or journal record names (the system's when it names none or a non-private one)."""
    r = OvsRef.model_validate(ref) if isinstance(ref, dict) else ref
    if r is None or not r.private:
        return Ovs(None)
    if dpdk is None and r.dpdk is not None:
        dpdk = DpdkOptions(**r.dpdk.model_dump())
    return Ovs(Path(r.base_dir), netns=r.netns, dpdk=dpdk)


def state_ovs(s: DeploymentState) -> Ovs:
    """The OVS instance of a deployment state, with its DPDK options when ``datapath`` is ``dpdk``.

    A state written before the DPDK options were recorded: they are read from the inventory's ``server.dpdk`` when
    the inventory file is still readable, else the defaults of :class:`harmless.ovs.DpdkOptions` apply.
    """
    ref = s.ovs
    if ref is None or not ref.private or ref.datapath != "dpdk" or ref.dpdk is not None:
        return ovs_from_ref(ref)
    try:
        dpdk = dpdk_options(load_inventory(s.inventory)) or DpdkOptions()
    except (HarmlessError, OSError):
        dpdk = DpdkOptions()
    return ovs_from_ref(ref, dpdk)
