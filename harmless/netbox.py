"""Switches from NetBox instead of (or besides) the inventory file, through Nornir's NetBox inventory plugin.

Inventory section (YAML)::

    netbox:
      url: https://netbox.example.org
      token_env: NETBOX_TOKEN            # the API token is a reference too, never written in the file
      filter: {role: access-switch, site: campus}   # NetBox /api/dcim/devices/ filter parameters
      defaults: {username: admin, password_env: SWITCH_PW, openflow: {controllers: ["tcp:10.0.0.5:6653"]}}

Every device NetBox returns becomes one inventory switch: ``name`` = the device name (lower case), ``host`` = its
primary IP (else its name), ``driver`` = the ``harmless.driver`` of its config context or else its platform slug
(mapped by :data:`PLATFORM_DRIVERS`), and the rest (``trunks``, ``access_ports``, ``vlan_range``, ``datapath_id``,
``openflow``, ...) from the ``harmless`` key of the device's config context, over ``defaults``. A device without a
``harmless`` config context is skipped (it is not meant for HARMLESS). The result is validated exactly like switches
written in the file.
"""
from __future__ import annotations

import os
from typing import Any

from harmless.errors import DeviceError, InputError

#: NetBox platform slug -> HARMLESS driver (inventory ``driver``); other slugs are used as they are.
PLATFORM_DRIVERS = {
    "cisco-ios": "ios", "cisco_ios": "ios", "ios-xe": "ios", "cisco-ios-xe": "ios", "iosxe": "ios",
    "arista-eos": "eos", "arista_eos": "eos", "juniper-junos": "junos", "juniper_junos": "junos",
    "hp-procurve": "procurve", "aruba-os-switch": "procurve", "arubaos-switch": "procurve",
}


def device_to_switch(device: dict[str, Any], hostname: str | None, defaults: dict[str, Any]) -> dict[str, Any] | None:
    """One NetBox device record -> an inventory switch dict (not yet validated), or None without ``harmless`` context.

    Args:
        device: the device as ``/api/dcim/devices/`` returns it (``name``, ``platform``, ``config_context``, ...).
        hostname: the management address Nornir derived (primary IP or name).
        defaults: the inventory's ``netbox.defaults``.
    """
    ctx = (device.get("config_context") or {}).get("harmless")
    if not isinstance(ctx, dict):
        return None
    sw: dict[str, Any] = {**defaults, **ctx}
    sw.setdefault("name", str(device.get("name") or device.get("id")).lower())
    if "driver" not in sw:
        plat = device.get("platform") or {}
        slug = plat.get("slug") if isinstance(plat, dict) else plat
        if slug:
            sw["driver"] = PLATFORM_DRIVERS.get(slug, slug)
    sw.setdefault("host", hostname)
    return sw


def fetch_switches(cfg: dict[str, Any], src: str) -> list[dict[str, Any]]:
    """Read the switches NetBox holds for HARMLESS (read-only).

    Args:
        cfg: the inventory's ``netbox`` mapping (``url``, ``token_env``, ``filter``, ``defaults``, ``ssl_verify``).
        src: the inventory file name, for errors.

    Returns:
        Inventory switch dicts in NetBox's order.

    Raises:
        InputError: the section is malformed or the token variable is unset.
        DeviceError: NetBox cannot be reached or refuses the token.
    """
    from nornir_netbox.plugins.inventory.netbox import NetBoxInventory2

    where = f"{src}: netbox"
    if not isinstance(cfg, dict) or not cfg.get("url"):
        raise InputError(f"{where}.url", "NetBox needs a url", "e.g. url: https://netbox.example.org")
    extra = set(cfg) - {"url", "token_env", "filter", "defaults", "ssl_verify"}
    if extra:
        raise InputError(f"{where}.{sorted(extra)[0]}", "unknown NetBox setting",
                         "use url, token_env, filter, defaults, ssl_verify")
    token = None
    if cfg.get("token_env"):
        token = os.environ.get(cfg["token_env"])
        if token is None:
            raise InputError(f"{where}.token_env", f"environment variable {cfg['token_env']} is not set",
                             f"export {cfg['token_env']}=<NetBox API token>")
    defaults = cfg.get("defaults") or {}
    if not isinstance(defaults, dict) or not isinstance(cfg.get("filter") or {}, dict):
        raise InputError(f"{where}.defaults", "defaults and filter must be mappings", "see README, NetBox")
    nb = NetBoxInventory2(nb_url=cfg["url"].rstrip("/"), nb_token=token or "", ssl_verify=cfg.get("ssl_verify", True),
                          filter_parameters=dict(cfg.get("filter") or {}), use_platform_slug=True,
                          group_file="/nonexistent/harmless-groups.yaml",
                          defaults_file="/nonexistent/harmless-defaults.yaml")
    try:
        inv = nb.load()
    except Exception as e:  # requests/ValueError from the plugin; the token is never in its messages
        raise DeviceError(f"{where}.url", f"cannot read devices from NetBox at {cfg['url']} ({type(e).__name__}: "
                          f"{str(e)[:200]})", "check url, token and that the API is reachable") from None
    out = []
    for host in inv.hosts.values():
        sw = device_to_switch(host.data, host.hostname, defaults)
        if sw is not None:
            out.append(sw)
    return out
