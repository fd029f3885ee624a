"""The labelled pairs of ``training/`` for the judge's tests (read from the repository).

``TRAINING`` are the pairs the shipped weights learned from (``pairs.txt`` and
``pairs_voices.txt`` for the word MLP, a quarter of each held out; the
cross-encoder also ``pairs_cross.txt``); ``UNSEEN`` and ``BLIND`` were written
later by people who saw neither the judge nor its pairs, and are never trained on.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import pairs as _pairs  # noqa: E402

LABELS = _pairs.LABELS
TRAINING = ("pairs.txt", "pairs_voices.txt")
CROSS_TRAINING = (*TRAINING, "pairs_cross.txt")
UNSEEN = "pairs_unseen.txt"
BLIND = "pairs_blind.txt"


def load_pairs(name: str = TRAINING[0]) -> list[tuple[str, str, str]]:
    """(label, earlier, later) of each line of ``training/<name>`` (``scripts/pairs.py``)."""
    return _pairs.load(name)


def held_out(pairs: list[tuple[str, str, str]], seed: int = 11) -> set[str]:
    """The earlier statements whose pairs were held out of training (a quarter, by fact)."""
    groups = sorted({a for _, a, _ in pairs})
    random.Random(seed).shuffle(groups)
    return set(groups[: len(groups) // 4])
