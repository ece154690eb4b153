"""MPLS label allocation per link (pure).

A label identifies one segment on one link; the receiving node matches ``in_port + label``, so a label needs to be
unique per link only, and one label serves both directions of a segment on that link (the OSHI paper reuses one
label for the IP and ARP paths of a VLL, Sec. IV.B). Labels 0-15 are reserved (RFC 3032 Sec. 2.1); the default
space is 16..1048575 (20 bits).

The used labels are always derived from the persisted service records, so a controller restart can never hand out
a label that a service still holds.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

MIN_LABEL = 16
MAX_LABEL = (1 << 20) - 1


class LabelSpaceExhausted(Exception):
    """No free label on a link. ``link`` is the link key."""

    def __init__(self, link: str, lo: int, hi: int):
        self.link, self.lo, self.hi = link, lo, hi
        super().__init__(f"no free MPLS label in {lo}..{hi} on link {link}")


@dataclass
class LabelAllocator:
    """Free/used labels per link.

    Args:
        lo, hi: label space (inclusive), within 16..1048575.
        used: link key -> labels in use.
    """

    lo: int = MIN_LABEL
    hi: int = MAX_LABEL
    used: dict[str, set[int]] = field(default_factory=dict)

    def __post_init__(self):
        if not MIN_LABEL <= self.lo <= self.hi <= MAX_LABEL:
            raise ValueError(f"label range {self.lo}..{self.hi} must lie within {MIN_LABEL}..{MAX_LABEL}")

    def allocate(self, link: str, avoid: int | None = None) -> int:
        """The lowest free label on ``link`` (marked used), other than ``avoid`` when another one is free (the
        label of the previous hop: then every transit node visibly swaps). Raises LabelSpaceExhausted."""
        taken = self.used.setdefault(link, set())
        free = list(itertools.islice((lab for lab in range(self.lo, self.hi + 1) if lab not in taken), 2))
        if len(free) > 1 and free[0] == avoid:
            free = free[1:]
        if free:
            taken.add(free[0])
            return free[0]
        raise LabelSpaceExhausted(link, self.lo, self.hi)

    def reserve(self, link: str, label: int) -> None:
        self.used.setdefault(link, set()).add(label)

    def release(self, link: str, label: int) -> None:
        self.used.get(link, set()).discard(label)

    def copy(self) -> "LabelAllocator":
        return LabelAllocator(self.lo, self.hi, {k: set(v) for k, v in self.used.items()})
