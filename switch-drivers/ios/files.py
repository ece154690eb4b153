"""Files on a Cisco IOS switch's own file system (``flash:``), over the netmiko session NAPALM ``ios`` holds.

What HARMLESS uses, from Cisco's documentation (Cisco IOS Configuration Fundamentals Command Reference):

* ``copy running-config flash:NAME``: the device writes its own running config to a file ("copy" command; NAPALM ios
  itself saves its rollback file this way, ``IOSDriver._gen_rollback_cfg``). IOS asks "Destination filename [NAME]?"
  (and "Do you want to over write? [confirm]" when it exists) unless ``file prompt quiet`` is set; both are answered
  with Enter.
* ``more flash:NAME``: print a file ("more" command). A file written by ``copy running-config`` carries the lines
  NAPALM's ``get_config`` filters from ``show running-config`` (``! Last configuration change at ...``, ``! NVRAM
  config last updated at ...``): :func:`config_text` filters the same lines, so the copy reads back as
  ``running_config()`` printed it.
* ``delete /force flash:NAME``: delete without the two confirmations ("delete" command, ``/force``).
* ``tclsh`` with ``puts [open "flash:NAME" w+] {...}``: write arbitrary text (Cisco IOS Scripting with Tcl; the form
  netmiko's ``InLineTransfer`` sends, with ``\\n`` sent as ``\\r``). netmiko's class waits fixed times (4-25 s per
  file); :func:`put_text` waits for the ``(tcl)#`` prompt instead. Like netmiko's, it refuses text with a curly
  brace or a trailing backslash (Tcl would read them), so it is used for HARMLESS's own small files only.
"""
from __future__ import annotations

import re
from typing import Any

#: the lines NAPALM ios ``get_config`` removes from ``show running-config`` (napalm/ios/ios.py, ``get_config``)
_FILTERED = re.compile(r"^(Building configuration.*|Current configuration :.*|! Last configuration change at.*|"
                       r"! NVRAM config last updated at.*)$", re.M)
_ERROR = re.compile(r"^%\s*(Error|Invalid|Incomplete)|No such file|not found", re.M)


def path(fs: str, name: str) -> str:
    """``flash:`` + ``name`` -> ``flash:name`` (``fs`` ends with ``:`` or ``/``)."""
    return f"{fs}{name}" if fs.endswith((":", "/")) else f"{fs}/{name}"


def config_text(raw: str) -> str:
    """A config file's text as NAPALM ``get_config`` returns a running config: the header lines filtered, stripped."""
    return _FILTERED.sub("", raw.replace("\r\n", "\n")).strip()


def copy_running(conn: Any, fs: str, name: str, timeout: float) -> str:
    """``copy running-config FS:NAME``, answering IOS's filename and overwrite prompts. Returns the output.

    Raises:
        OSError: the device reported an error (its line in the message).
    """
    out = conn.send_command(f"copy running-config {path(fs, name)}", expect_string=r"\?|\[confirm\]|#\s*$",
                            read_timeout=timeout, strip_prompt=False)
    for _ in range(3):                       # "Destination filename [x]?", then "over write? [confirm]"
        if not re.search(r"(\?|\[confirm\])\s*$", out.strip()):
            break
        out += conn.send_command("\n", expect_string=r"\?|\[confirm\]|#\s*$", read_timeout=timeout,
                                 strip_prompt=False)
    if _ERROR.search(out):
        raise OSError(_first_error(out))
    return out


def more(conn: Any, fs: str, name: str, timeout: float) -> str | None:
    """The text of ``FS:NAME`` (``more``), None when the file does not exist."""
    out = conn.send_command(f"more {path(fs, name)}", read_timeout=timeout)
    if re.search(r"^%Error opening .*\(No such file", out, re.M):
        return None
    if re.match(r"\s*%\s*(Invalid|Incomplete)", out):
        raise OSError(_first_error(out))
    return out.replace("\r\n", "\n")


def delete(conn: Any, fs: str, name: str, timeout: float) -> None:
    """``delete /force FS:NAME``; a missing file is fine.

    Raises:
        OSError: the device reported another error.
    """
    out = conn.send_command(f"delete /force {path(fs, name)}", read_timeout=timeout)
    if _ERROR.search(out) and "No such file" not in out:
        raise OSError(_first_error(out))


def put_text(conn: Any, fs: str, name: str, text: str, timeout: float) -> None:
    """Write ``text`` to ``FS:NAME`` with Tcl's ``puts`` (the file gets ``text`` + a final newline, as ``puts``
    writes it).

    Raises:
        ValueError: ``text`` has a curly brace or a line ending in a backslash (Tcl would interpret them).
        OSError: the device did not enter tclsh or reported an error.
    """
    if re.search(r"[{}]", text) or re.search(r"\\$", text, re.M):
        raise ValueError("a curly brace or a trailing backslash cannot be written through tclsh")
    body = text.rstrip("\n").replace("\n", "\r")
    out = conn.send_command("tclsh", expect_string=r"\(tcl\)#", read_timeout=timeout)
    try:
        out += conn.send_command(f'puts [open "{path(fs, name)}" w+] {{{body}}}', expect_string=r"\(tcl\)#",
                                 read_timeout=timeout, cmd_verify=False)
    finally:
        out += conn.send_command("tclquit", expect_string=re.escape(conn.base_prompt) + r"[>#]",
                                 read_timeout=timeout)
    if re.search(r"invalid command name|couldn't open|%\s*Error", out):
        raise OSError(_first_error(out))


def _first_error(out: str) -> str:
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    bad = [ln for ln in lines if _ERROR.search(ln) or "invalid command" in ln or "couldn't" in ln]
    return (bad or lines or ["no output"])[0]
