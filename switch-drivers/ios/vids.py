"""IOS VLAN-list syntax (``107,110-112``): pure helpers, no device access.

IOS prints runs of three or more consecutive VIDs as ``a-b`` and shorter runs as single numbers
(``10,11`` but ``10-12``); :func:`format_vid_ranges` follows that convention so that a rendered
``switchport trunk allowed vlan`` line is textually identical to what the device echoes back, which
keeps a second merge of the same config diff-free.
"""
from __future__ import annotations

from collections.abc import Iterable

MIN_VID, MAX_VID = 1, 4094


def format_vid_ranges(vids: Iterable[int]) -> str:
    """Format VIDs in IOS range syntax.

    Args:
        vids: VLAN ids (any order, duplicates allowed), each in 1..4094.

    Returns:
        Comma-separated list, runs of >= 3 consecutive VIDs as ``a-b``; ``"none"`` when empty.
        Example: ``[112, 107, 110, 111] -> "107,110-112"``, ``[10, 11] -> "10,11"``.

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
    parts = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}-{run[-1]}")
        else:
            parts.extend(str(v) for v in run)
    return ",".join(parts)


def parse_vid_ranges(text: str) -> tuple[int, ...] | None:
    """Parse an IOS VLAN list.

    Args:
        text: ``"107,110-112"``, ``"all"`` / ``"ALL"``, ``"none"``; spaces around items are ignored.

    Returns:
        Sorted tuple of distinct VIDs; ``None`` for ``all``; ``()`` for ``none`` or an empty string.

    Raises:
        ValueError: malformed item, reversed range or VID outside 1..4094.
    """
    spec = text.strip().lower()
    if spec == "all":
        return None
    if spec in ("", "none"):
        return ()
    out: set[int] = set()
    for item in spec.split(","):
        item = item.strip()
        lo_s, sep, hi_s = item.partition("-")
        try:
            lo = int(lo_s)
            hi = int(hi_s) if sep else lo
        except ValueError:
            raise ValueError(f"bad VLAN list item {item!r} in {text!r}") from None
        if lo > hi or lo < MIN_VID or hi > MAX_VID:
            raise ValueError(f"bad VLAN range {item!r} in {text!r} (VIDs are {MIN_VID}..{MAX_VID})")
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))
