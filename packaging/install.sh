#!/usr/bin/env bash
# Install everything HARMLESS needs on a fresh Debian 12 machine (run as root from the repo root):
#   Debian packages: Open vSwitch 3.1 (+ DPDK build), DPDK 22.11 (testpmd in dpdk-dev), iproute2, ping, ethtool,
#   FRR (zebra/ospfd for the OSHI lab)
#   Python: a virtualenv in .venv with the harmless package (editable) and its pinned dependencies.
# Usage: bash packaging/install.sh [--demo]     (--demo: run `harmless demo` afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
APT_PKGS=(openvswitch-switch openvswitch-switch-dpdk dpdk dpdk-dev
  librte-mempool-ring23 librte-bus-vdev23 librte-bus-pci23 librte-net-af-packet23 librte-net-tap23
  librte-net-vhost23 librte-net-virtio23 librte-net-null23 librte-net-ring23 librte-net-memif23
  iproute2 iputils-ping ethtool tcpdump procps frr iperf3   # iperf3: harmless overlay demo (TCP throughput)
  gcc libc6-dev pkg-config)   # gcc + pkg-config: harmless bench compiles its paced generator (bench/gen/hlbgen.c)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[install] apt: ${missing[*]}"
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip
# fake-switches 1.5.0 pins Twisted<17 (does not build on Python 3.11): install it without deps,
# its real runtime deps come from requirements.txt (see shared notes, python-stack.md §6.1).
.venv/bin/pip install -q -r packaging/requirements.txt
.venv/bin/pip install -q --no-deps fake-switches==1.5.0
.venv/bin/pip install -q --no-deps -e .
echo "[install] done: $(.venv/bin/harmless --version 2>/dev/null || echo 'harmless installed')"
if [ "${1:-}" = "--demo" ]; then
  exec .venv/bin/harmless demo
fi
