"""Faucet's hardware-switch integration suite against HARMLESS and a plain OVS bridge (python -m tests.interop.faucethw)."""
