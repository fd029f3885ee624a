"""The judge's shipped weights belong to the features and files they were measured with."""

from __future__ import annotations

import json
import subprocess
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


SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _retrain_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "train_judge.py"), "--check", *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.mark.slow
def test_a_retrain_rebuilds_the_shipped_mlps_bit_for_bit() -> None:
    """The MLP the manifest marks reproducible (the one over the words and the
    cross-encoder), retrained from the pairs of ``training/`` on this checkout's
    features, equals the shipped arrays to the bit (the script pins the
    numerics: one OpenBLAS thread on its Haswell kernels, numpy's AVX-512 loops
    off). The word MLP is marked not reproducible, and says why."""
    done = _retrain_check()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "judge_cross.npz: the same to the bit" in done.stdout
    assert "judge.npz: not rebuilt" in done.stdout
    saved = json.loads(judge_manifest.MANIFEST.read_text("utf-8"))
    assert saved["judge_cross.npz"]["reproducible"] is True
    words = saved["judge.npz"]
    assert words["reproducible"] is False and "worse" in words["trained_by"]


@pytest.mark.slow
def test_the_retrain_check_can_fail(tmp_path: Path) -> None:
    """Other training data give other weights, and the check says so: a pair
    file that reads differently fails it."""
    for name in ("pairs_voices.txt", "pairs_cross.txt", "pairs_unseen.txt", "pairs_blind.txt"):
        (tmp_path / name).write_bytes((judge_manifest.HERE / name).read_bytes())
    (tmp_path / "cross_oof.npz").write_bytes((judge_manifest.HERE / "cross_oof.npz").read_bytes())
    (tmp_path / "pairs.txt").write_bytes((judge_manifest.HERE / "pairs.txt").read_bytes())
    lines = (tmp_path / "pairs.txt").read_text("utf-8").splitlines()
    # One label turned: "same" -> "unrelated" for the first labelled pair.
    first = next(n for n, line in enumerate(lines) if line.startswith("same |"))
    lines[first] = "unrelated |" + lines[first].removeprefix("same |")
    (tmp_path / "pairs.txt").write_text("\n".join(lines) + "\n", "utf-8")
    done = _retrain_check("--pairs", str(tmp_path))
    assert done.returncode == 1
    assert "judge_cross.npz: DIFFERS from what ships" in done.stdout
