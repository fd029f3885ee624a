"""The word MLPs of the shipped judge: small two-layer networks over ``lexical`` features.

``judge.npz`` reads a pair's word features; ``judge_cross.npz`` reads the
same and the cross-encoder's four probabilities (for the pairs the judge
has a cross-encoder budget for). Both were trained by
``scripts/train_judge.py``; they read every column of ``lexical`` but those
only the rules read (``columns.RULE_ONLY``). Several members, when trained so, are
averaged.
"""

from __future__ import annotations

import io
import json
from functools import cache
from importlib import resources

import numpy as np

from halls.consolidate.judge.columns import N_LEXICAL, RULE_ONLY

WEIGHTS = "data/judge.npz"
CROSS_WEIGHTS = "data/judge_cross.npz"


def mlp_inputs(x: np.ndarray) -> np.ndarray:
    """The columns of the features the MLP reads: all but the rules' own."""
    return np.delete(x, RULE_ONLY, axis=1)


class MLP:
    """Two-layer MLPs whose probabilities are averaged (an ensemble of members
    trained from several starting points; one MLP is an ensemble of one)."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.mean = weights["mean"].astype(np.float32)
        self.std = weights["std"].astype(np.float32)
        w1 = weights["w1"].astype(np.float32)
        single = w1.ndim == 2
        self.w1 = w1[None] if single else w1
        self.b1 = weights["b1"].astype(np.float32).reshape(len(self.w1), -1)
        w2 = weights["w2"].astype(np.float32)
        self.w2 = w2[None] if single else w2
        self.b2 = weights["b2"].astype(np.float32).reshape(len(self.w2), -1)

    @property
    def inputs(self) -> int:
        return int(self.w1.shape[1])

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """P x 4 probabilities of rows of features (the rules not applied)."""
        m = (mlp_inputs(x) - self.mean) / self.std
        h = np.maximum(np.einsum("pi,mih->mph", m, self.w1) + self.b1[:, None], 0.0)
        z = np.einsum("mph,mhk->mpk", h, self.w2) + self.b2[:, None]
        z -= z.max(axis=2, keepdims=True)
        e = np.exp(z)
        return (e / e.sum(axis=2, keepdims=True)).mean(axis=0)


@cache
def load(name: str) -> MLP | None:
    """The MLP of ``name`` in the package, or None where it is missing.

    Its manifest entry (``data/manifest.json``) must name the features it reads
    as they are now (``schema``): weights trained on other features are refused."""
    base = resources.files("halls.consolidate.judge")
    try:
        data_bytes = base.joinpath(name).read_bytes()
        manifest = json.loads(base.joinpath("data/manifest.json").read_text("utf-8"))
    except (FileNotFoundError, OSError):
        return None
    entry = manifest.get(name.removeprefix("data/"), {})
    if entry.get("schema") != schema():
        raise RuntimeError(f"{name} was trained on other word features than the judge's")
    with np.load(io.BytesIO(data_bytes)) as data:
        return MLP({k: data[k] for k in data.files})


N_WORDS = N_LEXICAL - len(RULE_ONLY)  # the inputs of judge.npz


def schema() -> str:
    """The word features as the MLPs read them: how many (``data/manifest.json``
    records it for each MLP, beside a fingerprint of their values)."""
    return f"{N_WORDS} word features"
