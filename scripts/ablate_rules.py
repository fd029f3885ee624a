"""What each rule of the judge does on the pairs nobody tuned to.

    python scripts/ablate_rules.py [--files pairs_unseen.txt pairs_blind.txt ...]

For each file of ``training/`` written by people who saw neither the judge nor
its pairs (``pairs.MEASURED``), the accuracy of the shipped judge (the run's
cross-encoder budget, every active rule), and for each registered rule the
accuracy with that rule left out: a positive "pays" means the rule adds that
many pairs read right. A rule that pays on none of the files, and does not
pay on ``halls bench dreams`` either, is deleted (``judge/rules.py``). The
cross-encoder's readings are asked once and reused across the variants.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairs import HERE, LABELS, MEASURED, load  # noqa: E402

from halls.config import EmbedderSettings  # noqa: E402
from halls.consolidate.judge import CROSS_BUDGET, LocalJudge, Pair, mlp, rules  # noqa: E402
from halls.consolidate.judge.cross import default_reader  # noqa: E402
from halls.embed import build_embedder  # noqa: E402


class Remembered:
    """The shipped cross-encoder, each pair read once."""

    def __init__(self) -> None:
        reader = default_reader()
        assert reader is not None, "the cross-encoder is missing"
        self.reader = reader
        self.seen: dict[tuple[str, str], np.ndarray] = {}

    def read(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        todo = [p for p in dict.fromkeys(pairs) if p not in self.seen]
        if todo:
            self.seen.update(zip(todo, self.reader.read(todo), strict=True))
        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        return np.stack([self.seen[p] for p in pairs])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="+", default=[m for m in MEASURED if (HERE / m).is_file()])
    args = ap.parse_args()
    embedder = build_embedder(EmbedderSettings())
    reader = Remembered()
    words, cross = mlp.load(mlp.WEIGHTS), mlp.load(mlp.CROSS_WEIGHTS)
    assert words is not None
    variants = {"(all)": rules.ACTIVE} | {
        name: rules.ACTIVE - {name} for name in sorted(rules.ACTIVE)
    }
    right: dict[str, dict[str, int]] = {v: {} for v in variants}
    sizes = {}
    for name in args.files:
        items = load(name)
        sizes[name] = len(items)
        u = embedder.embed([a for _, a, _ in items])
        v = embedder.embed([b for _, _, b in items])
        pairs = [Pair(a, b, u[n], v[n]) for n, (_, a, b) in enumerate(items)]
        y = [label for label, _, _ in items]
        for variant, active in variants.items():
            judge = LocalJudge(words, cross, reader, CROSS_BUDGET * 100, active)
            got = judge.judge(pairs)
            right[variant][name] = sum(j.label == t for j, t in zip(got, y, strict=True))
    head = "".join(f"{n:>22}" for n in args.files)
    print(f"{'rule left out':24}{head}")
    for variant in variants:
        cells = []
        for name in args.files:
            n = right[variant][name]
            pays = right["(all)"][name] - n
            cells.append(
                f"{n / sizes[name]:>14.1%} ({pays:+d})"
                if variant != "(all)"
                else f"{n / sizes[name]:>22.1%}"
            )
        print(f"{variant:24}{''.join(cells)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
