"""Host-based VID allocation (Kawashima & Matsuo, Sec. III-B), persisted so VIDs stay stable across restarts.

A VID names one VM *on one server*: the receiving edge switch maps VID -> local VM. VIDs are unique per server only,
so the number of tenant networks is not bounded by 4094; each server can hold up to 4093 VMs.
"""
from __future__ import annotations

import json
from pathlib import Path

from harmless import state as st

#: VIDs handed out: 2..4094. VID 0 = priority tag, 4095 reserved (IEEE 802.1Q Table 9-2); VID 1 is the default/native
#: VLAN of most legacy switches, whose trunks may send it untagged, so it is left out.
VID_FIRST, VID_LAST = 2, 4094


class VidExhausted(Exception):
    """All VIDs of one server are in use."""


class VidAllocator:
    """``{server: {vm: VID}}``, saved (atomically, mode 0600) to ``path`` after every change.

    Args:
        path: JSON file; read at start if it exists (a restarted controller gets the same VIDs back).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.vids: dict[str, dict[str, int]] = {}
        if self.path.exists():
            data = json.loads(self.path.read_text() or "{}")
            self.vids = {s: {v: int(i) for v, i in m.items()} for s, m in data.items()}

    def get(self, server: str, vm: str) -> int | None:
        """The VID of ``vm`` on ``server``, or None."""
        return self.vids.get(server, {}).get(vm)

    def allocate(self, server: str, vm: str) -> int:
        """The VID of ``vm`` on ``server``: the existing one, else the lowest free one (saved before returning).

        Raises:
            VidExhausted: the server already has 4093 VMs.
        """
        m = self.vids.setdefault(server, {})
        if vm in m:
            return m[vm]
        used = set(m.values())
        vid = next((v for v in range(VID_FIRST, VID_LAST + 1) if v not in used), None)
        if vid is None:
            raise VidExhausted(f"server {server}: all VIDs {VID_FIRST}-{VID_LAST} are in use")
        m[vm] = vid
        self.save()
        return vid

    def release(self, server: str, vm: str) -> int | None:
        """Free ``vm``'s VID on ``server`` (saved); returns it, or None if it had none."""
        vid = self.vids.get(server, {}).pop(vm, None)
        if vid is not None:
            self.save()
        return vid

    def save(self) -> None:
        st.write_private(self.path, json.dumps(self.vids, indent=1, sort_keys=True))
