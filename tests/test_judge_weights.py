"""The judge's shipped weights belong to the features and files they were measured with."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import judge_manifest  # noqa: E402

from halls.consolidate.judge import columns, lexical, mlp  # noqa: E402


def test_the_shipped_weights_are_those_the_manifest_names() -> None:
    """Every model's SHA-256, the features' schema and fingerprint match the manifest
    (``scripts/judge_manifest.py``): a word list or feature changed without
    retraining the MLPs, or a weight file swapped, fails here."""
    assert judge_manifest.drift() == []


def test_a_changed_feature_is_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: features that read differently change the fingerprint."""
    monkeypatch.setattr(judge_manifest, "features_fingerprint", lambda: "0" * 64)
    assert judge_manifest.drift() == [
        "judge.npz: features differs from the manifest",
        "judge_cross.npz: features differs from the manifest",
    ]


def test_weights_for_other_features_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading checks the schema the manifest records against the judge's own."""
    saved = json.loads(judge_manifest.MANIFEST.read_text("utf-8"))
    assert saved["judge.npz"]["schema"] == mlp.schema()
    mlp.load.cache_clear()
    monkeypatch.setattr(mlp, "schema", lambda: "54 features, rules only: none")
    try:
        with pytest.raises(RuntimeError, match="other word features"):
            mlp.load(mlp.WEIGHTS)
    finally:
        mlp.load.cache_clear()


def test_every_feature_column_is_named() -> None:
    """The word features have one column a name in ``columns.COLUMNS``, and the
    rules' own columns are among them."""
    x = lexical.lexical(["Lena works at Siemens"], ["Lena works at Bosch"], np.zeros(1, np.float32))
    assert x.shape == (1, len(columns.COLUMNS)) and len(set(columns.COLUMNS)) == x.shape[1]
    assert set(columns.RULE_ONLY_COLUMNS) <= set(columns.COLUMNS)
