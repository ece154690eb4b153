"""Line-wise config diff and undo for block-structured CLI configs (IOS style), pure functions.

A config is read as ordered top-level lines, each with its indented child lines (``interface X`` /
`` switchport mode access``). Comparison ignores case and repeated spaces, and skips ``!``, ``end`` and
``exit`` lines. No device access here: :class:`..driver.NetmikoCliDriver` feeds these functions the
running config before and after.
"""
from __future__ import annotations

#: top-level lines never compared or negated (headers, version stamps)
_SKIP = ("!", "end", "exit", "version ", "building configuration", "current configuration")


def _norm(line: str) -> str:
    return " ".join(line.split()).lower()


def blocks(text: str) -> dict[str, tuple[str, list[str]]]:
    """``{normalised parent: (parent text, [child texts])}`` in config order (pure).

    Args:
        text: config text; children are lines that start with whitespace.

    Returns:
        Ordered mapping; a parent that appears twice has its children concatenated.
    """
    out: dict[str, tuple[str, list[str]]] = {}
    cur = None
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!") or s.lower().startswith(_SKIP):
            if raw[:1] not in (" ", "\t") and s.lower() in ("exit", "end"):
                cur = None
            continue
        if raw[0] in " \t" and cur is not None:
            out[cur][1].append(" ".join(s.split()))
        else:
            cur = _norm(s)
            out.setdefault(cur, (" ".join(s.split()), []))
    return out


def merge_diff(running: str, candidate: str) -> str:
    """What merging ``candidate`` would change, NAPALM-merge style (``+`` lines), '' when nothing (pure).

    A candidate line counts as a change when it is not already in the running block; a ``no X`` line counts
    only when the running block has a line starting with ``X`` (otherwise it is a no-op).

    Returns:
        e.g. ``"+interface Fa0/7\\n+ switchport access vlan 107"``; parents are listed once before their children.
    """
    run = blocks(running)
    out: list[str] = []
    for key, (parent, children) in blocks(candidate).items():
        have = {_norm(c) for c in run.get(key, ("", []))[1]}
        if key.startswith("no "):
            target = key[3:]
            if any(k == target or k.startswith(target + " ") for k in run):
                out.append("+" + parent)
            continue
        missing = []
        for c in children:
            n = _norm(c)
            if n.startswith("no "):
                if any(h == n[3:] or h.startswith(n[3:] + " ") for h in have):
                    missing.append(c)
            elif n not in have:
                missing.append(c)
        if key not in run or missing:
            out.append("+" + parent)
            out += ["+ " + c for c in missing]
    return "\n".join(out)


def transform(running: str, target: str) -> list[str]:
    """Config lines that turn ``running`` into ``target`` line by line (pure), for a non-atomic restore.

    Per block: the ``no`` form of child lines only in ``running`` first, then child lines only in
    ``target``; blocks only in ``running`` are removed with ``no <parent>`` (physical interfaces, which
    cannot be removed, with ``default interface X``); ``no ...`` lines are never negated.

    Returns:
        Lines for ``send_config_set`` (children indented by one space), [] when the two are equal.
    """
    run, new = blocks(running), blocks(target)
    out: list[str] = []
    for key in list(run) + [k for k in new if k not in run]:
        if key not in new:
            parent = run[key][0]
            if key.startswith("interface ") and not key.startswith(("interface vlan", "interface port-channel")):
                out.append("default " + parent)
            elif not key.startswith("no "):
                out.append("no " + parent)
            continue
        parent, want = new[key]
        have = run.get(key, (parent, []))[1]
        have_n, want_n = {_norm(c) for c in have}, {_norm(c) for c in want}
        rem = [c for c in have if _norm(c) not in want_n and not _norm(c).startswith("no ")]
        add = [c for c in want if _norm(c) not in have_n]
        if key not in run or rem or add:
            out.append(parent)
            out += [" no " + c for c in rem] + [" " + c for c in add]
    return out
