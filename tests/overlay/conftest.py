"""Shared by the overlay lab modules: one overlay lab per module, in a private HARMLESS_STATE_DIR."""
from __future__ import annotations

import uuid
from pathlib import Path

import yaml

from harmless import state as st
from harmless.overlay import lab as L

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def overlay_lab(tmp_path_factory, example: str, prefix: str):
    """Generator for a module fixture: ``examples/<example>`` as lab ``<prefix>`` + 3 hex digits; yields its name and
    removes the lab afterwards, also when the test failed."""
    state = tmp_path_factory.mktemp(f"{prefix}state")
    name = prefix + uuid.uuid4().hex[:3]
    d = yaml.safe_load((EXAMPLES / example).read_text())
    d["name"] = name
    topo = state / "topo.yaml"
    topo.write_text(yaml.safe_dump(d))
    with st.using(state):
        try:
            L.up(str(topo))
            yield name
        finally:
            L.down(name)
