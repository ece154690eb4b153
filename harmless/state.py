"""Persisted state of a HARMLESS deployment: ``<state dir>/state.json`` and the switch config backups.

The state directory is ``$HARMLESS_STATE_DIR`` or ``/var/lib/harmless``. It holds:
  * ``state.json`` (mode 0600): the applied plan, the inventory path and its non-secret switch entries (how to reach
    each device again for ``down``; the password stays a *reference*), the OVS instance used, and per switch the
    backup file and SHA-256 of the original running config.
  * ``backups/<switch>-<UTC time>.cfg`` (mode 0600): the running config saved before the first change.
  * ``ovs/``: the private OVS instance (when HARMLESS runs its own).
Passwords are never written here.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path


def state_dir() -> Path:
    """The state directory (created 0700 if missing)."""
    d = Path(os.environ.get("HARMLESS_STATE_DIR", "/var/lib/harmless"))
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load() -> dict | None:
    """The current deployment state, or None when nothing is deployed."""
    p = state_dir() / "state.json"
    if not p.exists():
        return None
    return json.loads(p.read_text())


def save(state: dict) -> None:
    """Write the state atomically with mode 0600."""
    _write_private(state_dir() / "state.json", json.dumps(state, indent=2, sort_keys=True))


def clear() -> None:
    """Forget the deployment (backups are kept for the record)."""
    p = state_dir() / "state.json"
    if p.exists():
        p.unlink()


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def save_backup(switch: str, config: str) -> dict:
    """Save a running config before any change. Returns ``{"file": path, "sha256": hex}``."""
    d = state_dir() / "backups"
    d.mkdir(exist_ok=True, mode=0o700)
    p = d / f"{switch}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.cfg"
    _write_private(p, config)
    return {"file": str(p), "sha256": sha256(config)}


def read_backup(entry: dict) -> str:
    """Read a backup and check its SHA-256. Raises ValueError if it was altered."""
    text = Path(entry["file"]).read_text()
    if sha256(text) != entry["sha256"]:
        raise ValueError(f"backup {entry['file']} does not match its recorded SHA-256")
    return text
