"""EOS VLAN-list syntax (``107-108,110``): the shared :mod:`harmless.switch_drivers.vids` with EOS's spelling.

EOS prints every run of two or more consecutive VIDs as ``a-b`` in ``switchport trunk allowed vlan``.
EOS diffs whole configurations (config sessions), not command text, so the rendered spelling only has to
be valid; following the device's own spelling keeps rendered text and running config alike for readers.
Parsing accepts IOS and EOS spellings alike (``all``, ``none``, ``10,11``, ``10-11``).
"""
from __future__ import annotations

from collections.abc import Iterable

from harmless.switch_drivers import vids as _vids
from harmless.switch_drivers.vids import MAX_VID, MIN_VID, parse_vid_ranges

__all__ = ["MIN_VID", "MAX_VID", "format_vid_ranges", "parse_vid_ranges"]


def format_vid_ranges(vids: Iterable[int]) -> str:
    """VIDs as EOS prints them: runs of >= 2 as ``a-b`` (``[110, 107, 108] -> "107-108,110"``); ``"none"``
    when empty. Raises ValueError for a VID outside 1..4094."""
    return _vids.format_vid_ranges(vids, min_run=2)
