"""IOS VLAN-list syntax (``107,110-112``): the shared :mod:`harmless.switch_drivers.vids` with IOS's spelling.

IOS prints runs of three or more consecutive VIDs as ``a-b`` and shorter runs as single numbers
(``10,11`` but ``10-12``); :func:`format_vid_ranges` follows that convention so that a rendered
``switchport trunk allowed vlan`` line is textually identical to what the device echoes back, which
keeps a second merge of the same config diff-free.
"""
from __future__ import annotations

from collections.abc import Iterable

from harmless.switch_drivers import vids as _vids
from harmless.switch_drivers.vids import MAX_VID, MIN_VID, parse_vid_ranges

__all__ = ["MIN_VID", "MAX_VID", "format_vid_ranges", "parse_vid_ranges"]


def format_vid_ranges(vids: Iterable[int]) -> str:
    """VIDs in IOS range syntax: runs of >= 3 as ``a-b`` (``[112, 107, 110, 111] -> "107,110-112"``,
    ``[10, 11] -> "10,11"``); ``"none"`` when empty. Raises ValueError for a VID outside 1..4094."""
    return _vids.format_vid_ranges(vids, min_run=3)
