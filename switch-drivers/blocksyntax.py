"""IOS and EOS running configs as objects: a top-level line with its indented children (pure).

``interface FastEthernet0/7`` + `` switchport access vlan 107`` is one object keyed ``interface fastethernet0/7``
(its lines keep the device's text, header first); a top-level line without children (``hostname sw1``,
``ip route ...``) is an object of its own. ``!`` comments, blank lines and ``end`` separate objects and belong to
none. Banners (``banner motd ^C`` ... ``^C`` on IOS, ``banner login`` ... ``EOF`` on EOS) are one object with all
their lines, though these are not indented (Cisco IOS Configuration Fundamentals, "banner motd": the text ends at
the delimiter character; Arista EOS User Manual, "banner login": the text ends with ``EOF``).

In a candidate (the tagging config HARMLESS renders) ``no vlan 105`` addresses the object ``vlan 105`` and
``default interface X`` the object ``interface x``.

A global command over a VLAN list (IOS ``[no] mac address-table learning vlan LIST``, which takes one VID or a list
of VIDs and ranges: Cisco IE 2000 Switch Software Configuration Guide, "MAC Address Learning on a VLAN"; the lab's
IOS prints one such line with every VLAN that does not learn) is one object keyed by the command alone, whichever
VLANs it names and whether it is the ``no`` form (:data:`LIST_COMMANDS`): the operator's VLANs and HARMLESS's share
that line, so HARMLESS owns the line as a whole (its base: the line before HARMLESS, or none).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from harmless.switch_drivers.ownership import ConfigSyntax, Lines, Units, norm

_BANNER = re.compile(r"^banner\s+\S+(?:\s+(\S.*))?$")
#: global one-line commands over a VLAN list: (pattern of the normalised line, the object's key)
LIST_COMMANDS = ((re.compile(r"^(no )?mac address-table learning vlan( |$)"), "mac address-table learning vlan"),)


def key_of(line: str) -> str:
    """The object key of a top-level line: the line normalised, or the command of a :data:`LIST_COMMANDS` line."""
    k = norm(line)
    return next((key for pat, key in LIST_COMMANDS if pat.match(k)), k)


def _banner_end(header: str) -> str | None:
    """The line that ends a banner opened by ``header`` (None when ``header`` is not a banner or closes itself)."""
    m = _BANNER.match(header.strip())
    if not m:
        return None
    rest = m.group(1)
    if not rest:
        return "EOF"                                    # EOS: banner login / banner motd, text up to EOF
    delim = rest[:2] if rest.startswith("^") and len(rest) > 1 else rest[0]
    return None if rest.count(delim) >= 2 else delim   # IOS: the delimiter closes it (same line or later)


def segments(text: str) -> list[tuple[str | None, list[str]]]:
    """``[(key or None, raw lines)]``: each object with its lines, and the separators between them (key None).

    A key that repeats (the same top-level line twice) keeps its segments apart; :func:`units` joins them.
    """
    out: list[tuple[str | None, list[str]]] = []
    banner: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if banner is not None:
            out[-1][1].append(line)
            if banner in line if banner != "EOF" else line.strip() == "EOF":
                banner = None
            continue
        s = line.strip()
        if not s or s.startswith("!") or s == "end":
            out.append((None, [line]))
        elif line[:1] in (" ", "\t") and out and out[-1][0] is not None:
            out[-1][1].append(line)
        elif line[:1] in (" ", "\t"):
            out.append((None, [line]))                   # an indented line without a parent: keep, own no object
        else:
            out.append((key_of(s), [line]))
            banner = _banner_end(s)
    return out


class BlockSyntax(ConfigSyntax):
    """The IOS / EOS syntax (also the netmiko ``cisco_ios`` dialect)."""

    name = "blocks"

    def units(self, text: str) -> Units:
        """``{key: (header, children...)}`` in config order; a repeated key has its lines joined."""
        out: dict[str, tuple[str, ...]] = {}
        for key, lines in segments(text):
            if key is not None:
                out[key] = out.get(key, ()) + tuple(lines)
        return out

    def touched(self, candidate: str) -> list[str]:
        """Keys a candidate addresses: its objects, ``no X`` → ``x``, ``default interface X`` → ``interface x``."""
        keys: list[str] = []
        for key, _lines in segments(candidate):
            if key is None or key in ("exit", "end"):
                continue
            if key.startswith("default interface "):
                key = key[len("default "):]
            elif key.startswith("no "):
                key = key[3:]
            if key not in keys:
                keys.append(key)
        return keys

    def assemble(self, text: str, replace: Mapping[str, Lines], order: Iterable[str] = ()) -> str:
        """``text`` with the objects of ``replace`` replaced, removed or inserted (see
        :meth:`ConfigSyntax.assemble`); separators and every other object keep the device's text."""
        segs = segments(text)
        present = {k for k, _ in segs if k is not None}
        inserts = _insert_points([k for k, v in replace.items() if k not in present and v], present, list(order))
        out: list[str] = []
        done: set[str] = set()
        for key, lines in segs:
            if key is None or key not in replace:
                out += lines
            elif key not in done and replace[key]:
                out += list(replace[key])
            if key is not None:
                done.add(key)
                for new in inserts.pop(key, []):
                    out += list(replace[new]) + ["!"]
        for new in (k for ks in inserts.values() for k in ks):
            at = _before_end(out)
            out[at:at] = list(replace[new]) + ["!"]
        return "\n".join(out) + "\n"


def _insert_points(missing: list[str], present: set[str], order: list[str]) -> dict[str | None, list[str]]:
    """``{key present in the text: [missing keys to insert after it]}``; None: no anchor (at the end)."""
    points: dict[str | None, list[str]] = {}
    for key in missing:
        anchor = None
        if key in order:
            anchor = next((k for k in reversed(order[:order.index(key)]) if k in present), None)
        points.setdefault(anchor, []).append(key)
    return points


def _before_end(lines: list[str]) -> int:
    """Index before a final ``end`` line (or the end of ``lines``)."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == "end":
            return i
        if lines[i].strip():
            break
    return len(lines)
