"""Installed into the Faucet suite's virtualenv only (tests/interop/faucethw/install.py): scapy without the protocol
layers that Faucet's integration tests never use.

Faucet's tests send frames with ``python3 -c "from scapy.all import * ; sendp(...)"`` while a ``tcpdump`` with a
3-second lifetime listens; scapy 2.7 loads about 50 layer modules on import, which takes 4-8 s on a loaded 2-core
machine, so frames were sent after the capture had ended (on plain OVS as on HARMLESS). The layers dropped here
(Bluetooth, 802.11, 802.15.4, Kerberos, SMB, LDAP, DCE/RPC, NTLM, X.509, ...) appear in no test; Ethernet, 802.1Q,
ARP, IPv4/IPv6, ICMP/ICMPv6, UDP/TCP, DHCP, EAP and the rest stay, and ``scapy.contrib`` modules load as before.
"""
import importlib.abc
import sys

UNUSED_LAYERS = {"bluetooth", "bluetooth4LE", "dcerpc", "dot11", "dot15d4", "gprs", "gssapi", "ir", "kerberos",
                 "ldap", "msrpce.rpcclient", "msrpce.rpcserver", "ntlm", "sixlowpan", "smb", "smb2", "smbclient",
                 "smbserver", "spnego", "x509", "zigbee"}


class _TrimScapyLayers(importlib.abc.MetaPathFinder):
    """Before ``scapy.layers.all`` runs (it loads ``conf.load_layers``), drop :data:`UNUSED_LAYERS` from the list."""

    def find_spec(self, name, path, target=None):
        if name == "scapy.layers.all":
            conf = sys.modules["scapy.config"].conf
            conf.load_layers = [x for x in conf.load_layers if x not in UNUSED_LAYERS]
        return None


sys.meta_path.insert(0, _TrimScapyLayers())
