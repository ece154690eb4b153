"""Golden-file helper: compare rendered text with ``tests/unit/golden/<name>``.

``HARMLESS_UPDATE_GOLDEN=1 pytest tests/unit`` rewrites the files (review the git diff before committing).
"""
from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, text: str) -> str:
    """Assert ``text`` equals the golden file ``name`` (or write it when updating); return the golden text."""
    path = GOLDEN / name
    if os.environ.get("HARMLESS_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing golden file {path} (run with HARMLESS_UPDATE_GOLDEN=1 to create it)"
    golden = path.read_text()
    assert text == golden, f"rendered text differs from {path}"
    return golden
