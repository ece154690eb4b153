"""EOS VLAN-list syntax (``107-108,110``): pure helpers.

EOS prints every run of two or more consecutive VIDs as ``a-b`` in ``switchport trunk allowed vlan``.
EOS diffs whole configurations (config sessions), not command text, so the rendered spelling only has to
be valid; following the device's own spelling keeps rendered text and running config alike for readers.
Parsing accepts IOS and EOS spellings alike (``all``, ``none``, ``10,11``, ``10-11``).
"""
from __future__ import annotations

from collections.abc import Iterable

from harmless.switch_drivers.ios.vids import MAX_VID, MIN_VID, parse_vid_ranges

__all__ = ["MIN_VID", "MAX_VID", "format_vid_ranges", "parse_vid_ranges"]


def format_vid_ranges(vids: Iterable[int]) -> str:
    """Format VIDs as EOS prints them.

    Args:
        vids: VLAN ids (any order, duplicates allowed), each in 1..4094.

    Returns:
        Comma-separated list with runs of >= 2 consecutive VIDs as ``a-b``; ``"none"`` when empty.
        Example: ``[110, 107, 108] -> "107-108,110"``.

    Raises:
        ValueError: a VID is outside 1..4094 or not an int.
    """
    ordered = sorted(set(vids))
    for vid in ordered:
        if not isinstance(vid, int) or isinstance(vid, bool) or not MIN_VID <= vid <= MAX_VID:
            raise ValueError(f"VLAN id {vid!r} is outside {MIN_VID}..{MAX_VID}")
    if not ordered:
        return "none"
    runs: list[list[int]] = []
    for vid in ordered:
        if runs and runs[-1][-1] + 1 == vid:
            runs[-1].append(vid)
        else:
            runs.append([vid])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
