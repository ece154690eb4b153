"""Secret resolution: a switch's password from the reference the inventory holds (never the password itself).

The inventory names an environment variable (``password_env``) or a file (``password_file``, mode 0600); this
module reads it when a command connects, never at load time.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from harmless.errors import InputError


def resolve_password(password_env: str | None, password_file: str | None, where: str = "") -> str:
    """The password a reference points at: the variable ``password_env``, else the file ``password_file``.

    Args:
        password_env: name of an environment variable holding the password (checked first).
        password_file: path of a file holding only the password (trailing newlines dropped); must not be readable
            by group or others.
        where: the field path of the switch in errors (``inventory.yaml: switches[0]``).

    Raises:
        InputError: naming ``{where}.password_env`` / ``{where}.password_file`` when the variable is unset, the file
            is unreadable or readable by others.
    """
    if password_env:
        val = os.environ.get(password_env)
        if val is None:
            raise InputError(f"{where}.password_env", f"environment variable {password_env} is not set",
                             f"export {password_env}=... before running harmless")
        return val
    p = Path(password_file).expanduser()
    try:
        mode = p.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise InputError(f"{where}.password_file", f"{p} is readable by others (mode {oct(mode & 0o777)})",
                             f"chmod 600 {p}")
        return p.read_text().rstrip("\n")
    except OSError as e:
        raise InputError(f"{where}.password_file", f"cannot read {p} ({e.strerror})",
                         "point password_file at a readable file holding only the password (mode 0600)") from e
