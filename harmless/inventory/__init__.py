"""The inventory: what HARMLESS manages (YAML, validated with pydantic).

Shape (see README "Inventory reference" and ``examples/lab.yaml``)::

    server:    {datapath: netdev|dpdk, ovs: auto|system|private, netns: NAME, dpdk: {hugepages: bool, ...}}
    switches:  # one or more legacy switches; each gets its own OpenFlow bridge (br-of-<name>)
      - name, driver (napalm name: ios, ...), host, port, username,
        password_env: VAR  |  password_file: /path (mode 0600)      # a *reference*, never the password
        optional_args: {...}                                        # NAPALM optional_args
        trunks: [{switch_port, server_interface, type: auto|system|afxdp|dpdk|dpdkvhostuserclient, ...}]
        access_ports: [FastEthernet0/7, {interface: FastEthernet0/10, ofport: 10, vid: 110, trunk: Gi0/2,
                       qinq: false}]
        stag_tpid: 0x88a8                                           # outer TPID of qinq ports (default: driver's)
        vlan_range: "100-199"
        datapath_id: "0x0000000000000001"
        openflow: {versions: [OpenFlow13], controllers: ["tcp:127.0.0.1:6653"]}
        heartbeat_vid: 199                                          # ha: the BFD heartbeat VLAN (default: chosen)
    ha:        # optional: active/standby servers (docs/high-availability.md); each trunk then names its server:
      servers: [{name: a, agent: "192.0.2.11:7450", netns: NAME}, {name: b, agent: "192.0.2.12:7450"}]
      secret_env: VAR  |  secret_file: /path (mode 0600)          # the agents' shared HMAC secret
      interval_ms: 100, multiplier: 3, hold_s: 5

Every validation failure becomes one :class:`harmless.errors.InputError` line naming the file, the field path
(``switches[0].access_ports[1]``) and the fix. Loading changes nothing anywhere and contacts no device; it is bounded
(file size, YAML nesting, nodes after alias expansion) so that any file loads within 256 MiB and 5 s. The checks are
listed in ``docs/inventory-validation.md``; interface names are compared canonically per driver
(:mod:`harmless.switch_drivers.names`).

The package, bottom to top: :mod:`~harmless.inventory.secrets` (password references resolved),
:mod:`~harmless.inventory.model` (the pydantic models), :mod:`~harmless.inventory.checks` (cross-field checks),
:mod:`~harmless.inventory.loader` (bounded YAML with locations, ``parse_inventory``/``load_inventory``). The public
names are re-exported here: ``from harmless.inventory import Inventory, Switch, load_inventory``.
"""
from __future__ import annotations

from harmless.inventory.checks import check_inventory, host_problem, parse_agent, parse_controller
from harmless.inventory.loader import (MAX_INVENTORY_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES, load_inventory,
                                       parse_inventory)
from harmless.inventory.model import (NAME_RE, OF_VERSIONS, OPENFLOW_PORT, AccessPort, DpdkSettings, HaServer, HaSettings,
                                      Inventory, OpenFlowSettings, OriginalsSettings, Server, Switch, TlsSettings, Trunk,
                                      port_index)
from harmless.inventory.secrets import resolve_password

__all__ = [
    "MAX_INVENTORY_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "NAME_RE", "OF_VERSIONS", "OPENFLOW_PORT",
    "AccessPort", "DpdkSettings", "HaServer", "HaSettings", "Inventory", "OpenFlowSettings", "OriginalsSettings", "Server",
    "Switch", "TlsSettings", "Trunk",
    "check_inventory", "host_problem", "load_inventory", "parse_agent", "parse_controller", "parse_inventory", "port_index",
    "resolve_password",
]
