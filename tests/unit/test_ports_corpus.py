"""Golden files: every realistic config in ``tests/unit/ports_corpus/<driver>/<name>.cfg`` parses to exactly the
``harmless ports --json`` object in ``<name>.json`` beside it (and, when present, ``<name>.show.json`` holds the
``show`` outputs the driver would read online, as ``{command: output}``).

To add a case: write the config, check the model by hand, then write the JSON (``harmless ports --driver D
--config F --json``) and review it line by line before committing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harmless.switch_drivers.models import parse_model

CORPUS = Path(__file__).parent / "ports_corpus"
CASES = sorted(CORPUS.glob("*/*.cfg"))


@pytest.mark.parametrize("cfg", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_config_parses_to_its_golden_model(cfg: Path):
    show_file = cfg.with_suffix(".show.json")
    show = json.loads(show_file.read_text()) if show_file.exists() else None
    got = parse_model(cfg.parent.name, cfg.read_text(), show).to_json_dict()
    want = json.loads(cfg.with_suffix(".json").read_text())
    assert got == want


def test_corpus_covers_every_vendor():
    vendors = {c.parent.name for c in CASES}
    if not CASES:
        pytest.skip("the corpus is being written (tests/unit/ports_corpus)")
    assert {"ios", "eos", "junos", "procurve"} <= vendors, f"corpus has only {sorted(vendors)}"
