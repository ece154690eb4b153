"""Secret resolution: a switch's password from the reference the inventory holds (never the password itself).

The inventory names an environment variable (``password_env``) or a file (``password_file``, mode 0600); this
module reads it when a command connects, never at load time.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from harmless.errors import InputError


#: what a non-regular file is, by its ``stat`` type (for the error naming it)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def read_regular(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """At most ``limit`` bytes of a regular file, and its ``stat``, without ever blocking on anything else: the file
    is opened non-blocking (a FIFO with no writer would otherwise hang the open or the read) and checked with
    ``fstat`` before a byte is read.

    Raises:
        OSError: it cannot be opened or read (``strerror`` says why).
        ValueError: it is not a regular file; the message says what it is (``"a FIFO (named pipe)"``).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(next((kind for test, kind in _KINDS if test(st.st_mode)), "not a regular file"))
        os.set_blocking(fd, True)
        chunks, left = [], limit
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def _checked(password: str, field: str, source: str) -> str:
    """The password, unless it is empty or holds a line break (which would end the login line and send the rest
    as a command to the switch's CLI). Raises InputError naming ``field``."""
    if not password:
        raise InputError(field, f"{source} is empty", "put the switch's password there")
    if any(c in password for c in "\r\n\x00"):
        raise InputError(field, f"{source} holds a line break or NUL inside the password",
                         "keep the password on one line, without control characters")
    return password


def resolve_password(password_env: str | None, password_file: str | None, where: str = "") -> str:
    """The password a reference points at: the variable ``password_env``, else the file ``password_file``.

    Args:
        password_env: name of an environment variable holding the password (checked first).
        password_file: path of a regular file whose first line is the password (the line break after it, and any
            further lines, are not part of it); must not be readable by group or others.
        where: the field path of the switch in errors (``inventory.yaml: switches[0]``).

    Raises:
        InputError: naming ``{where}.password_env`` / ``{where}.password_file`` when the variable is unset or empty,
            the file is unreadable, not a regular file (a FIFO is refused without opening it for a blocking read),
            readable by others, empty or with an empty first line, or the password holds a line break.
    """
    if password_env:
        val = os.environ.get(password_env)
        if val is None:
            raise InputError(f"{where}.password_env", f"environment variable {password_env} is not set",
                             f"export {password_env}=... before running harmless")
        return _checked(val, f"{where}.password_env", f"environment variable {password_env}")
    p = Path(password_file).expanduser()
    field = f"{where}.password_file"
    try:
        raw, st = read_regular(p, 64 * 1024)
    except ValueError as e:
        raise InputError(field, f"{p} is {e}, not a file holding the password",
                         "point password_file at a regular file holding only the password (mode 0600)") from None
    except OSError as e:
        raise InputError(field, f"cannot read {p} ({e.strerror})",
                         "point password_file at a readable file holding only the password (mode 0600)") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InputError(field, f"{p} is readable by others (mode {oct(st.st_mode & 0o777)})", f"chmod 600 {p}")
    text = raw.decode("utf-8", "replace")
    if not text.strip("\r\n"):
        raise InputError(field, f"{p} is empty", "write the switch's password on its first line")
    first = text.split("\n", 1)[0].removesuffix("\r")
    if not first:
        raise InputError(field, f"the first line of {p} is empty (the password is the first line)",
                         "write the password on the first line, with nothing before it")
    return _checked(first, field, f"the first line of {p}")
