"""The labelled pairs of ``training/`` for the judge's tests (read from the repository).

``TRAINING`` are the pairs the shipped weights learned from (``pairs.txt`` and
``pairs_voices.txt`` for the word MLP, a quarter of each held out; the
cross-encoder also ``pairs_cross.txt``); ``UNSEEN`` and ``BLIND`` were written
later by people who saw neither the judge nor its pairs, and are never trained on.
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "training"
LABELS = ("same", "update", "retract", "unrelated")
TRAINING = ("pairs.txt", "pairs_voices.txt")
CROSS_TRAINING = (*TRAINING, "pairs_cross.txt")
UNSEEN = "pairs_unseen.txt"
BLIND = "pairs_blind.txt"


def load_pairs(name: str = TRAINING[0]) -> list[tuple[str, str, str]]:
    """(label, earlier, later) of each line of ``training/<name>``."""
    out: list[tuple[str, str, str]] = []
    for n, line in enumerate((HERE / name).read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or parts[0] not in LABELS:
            raise ValueError(f"{name}:{n}: not 'LABEL | earlier | later'")
        out.append((parts[0], parts[1], parts[2]))
    return out


def held_out(pairs: list[tuple[str, str, str]], seed: int = 11) -> set[str]:
    """The earlier statements whose pairs were held out of training (a quarter, by fact)."""
    groups = sorted({a for _, a, _ in pairs})
    random.Random(seed).shuffle(groups)
    return set(groups[: len(groups) // 4])
