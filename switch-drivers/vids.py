"""VLAN-list syntax shared by the Cisco-style drivers (IOS, EOS): ``107,110-112`` (pure, no device access).

Parsing accepts every spelling both OSes print or take (``all``, ``none``, ``10,11``, ``10-11``). Formatting
differs only in how long a run of consecutive VIDs must be before the OS prints it as ``a-b``: IOS from three
(``10,11`` but ``10-12``), EOS from two (``10-11``); :func:`format_vid_ranges` takes that as ``min_run`` and the
vendor modules (:mod:`.ios.vids`, :mod:`.eos.vids`) fix it, so a rendered ``switchport trunk allowed vlan`` line
reads like the device's own echo.
"""
from __future__ import annotations

from collections.abc import Iterable

#: 802.1Q VIDs usable for VLANs (IEEE 802.1Q-2018 §9.6: 0 and 4095 are reserved)
MIN_VID, MAX_VID = 1, 4094

__all__ = ["MIN_VID", "MAX_VID", "check_vid", "format_vid_ranges", "parse_vid_ranges"]


def check_vid(vid: int, what: str = "") -> None:
    """Raise ValueError unless ``vid`` is an int in 1..4094 (``what`` prefixes the message, e.g. the interface)."""
    if not isinstance(vid, int) or isinstance(vid, bool) or not MIN_VID <= vid <= MAX_VID:
        prefix = f"{what}: " if what else ""
        raise ValueError(f"{prefix}VLAN id {vid!r} is outside {MIN_VID}..{MAX_VID}")


def format_vid_ranges(vids: Iterable[int], min_run: int) -> str:
    """Format VIDs as a comma-separated VLAN list.

    Args:
        vids: VLAN ids (any order, duplicates allowed), each in 1..4094.
        min_run: runs of at least this many consecutive VIDs are written ``a-b`` (IOS: 3, EOS: 2).

    Returns:
        e.g. ``[112, 107, 110, 111]`` → ``"107,110-112"``; ``[10, 11]`` → ``"10,11"`` (min_run 3) or
        ``"10-11"`` (min_run 2); ``"none"`` when empty.

    Raises:
        ValueError: a VID is outside 1..4094 or not an int.
    """
    ordered = sorted(set(vids))
    for vid in ordered:
        check_vid(vid)
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
        if len(run) >= min_run and len(run) > 1:
            parts.append(f"{run[0]}-{run[-1]}")
        else:
            parts.extend(str(v) for v in run)
    return ",".join(parts)


def parse_vid_ranges(text: str) -> tuple[int, ...] | None:
    """Parse a VLAN list.

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
