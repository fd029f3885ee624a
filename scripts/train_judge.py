"""Train the local judge of statement pairs and report its held-out accuracy.

    PYTHONPATH=src python scripts/train_judge.py [--out src/halls/consolidate/judge_data]

Reads ``judge_data/pairs.txt`` (LABEL | earlier | later, written by the
team), embeds every statement with the default embedder, and splits the
pairs by their earlier statement (all pairs about one fact fall on the same
side) into a training part and a held-out quarter. On the training part a
small grid of MLPs is compared by grouped 5-fold cross-validation; the best
is trained on the whole training part and saved as ``judge.npz``. The
held-out accuracy of the word-list rule (``WordJudge``), of a logistic model
on the lexical features alone and of the saved MLP is written to
``report.json`` and printed. Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np

from halls.config import EmbedderSettings
from halls.consolidate.judge import (
    LABELS,
    N_LEXICAL,
    LocalJudge,
    Pair,
    WordJudge,
    features,
    held_out,
    load_pairs,
)
from halls.embed import build_embedder

HERE = Path(__file__).resolve().parent.parent / "src" / "halls" / "consolidate" / "judge_data"
REVERSED = {"same": "same", "unrelated": "unrelated", "update": "update", "retract": "update"}


def train_mlp(
    x: np.ndarray, y: np.ndarray, hidden: int, l2: float, epochs: int, seed: int
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-4
    xs = (x - mean) / std
    k = len(LABELS)
    params = {
        "w1": rng.normal(0, np.sqrt(2 / xs.shape[1]), (xs.shape[1], hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0, np.sqrt(2 / hidden), (hidden, k)),
        "b2": np.zeros(k),
    }
    m = {n: np.zeros_like(v) for n, v in params.items()}
    s = {n: np.zeros_like(v) for n, v in params.items()}
    onehot = np.eye(k)[y]
    # Balance the labels: each class weighs the same in the loss.
    weight = (len(y) / (k * np.bincount(y, minlength=k)))[y][:, None]
    lr, b1, b2 = 3e-3, 0.9, 0.999
    for t in range(1, epochs + 1):
        h_pre = xs @ params["w1"] + params["b1"]
        h = np.maximum(h_pre, 0)
        z = h @ params["w2"] + params["b2"]
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot) * weight / len(y)
        grads = {
            "w2": h.T @ dz + l2 * params["w2"],
            "b2": dz.sum(axis=0),
        }
        dh = (dz @ params["w2"].T) * (h_pre > 0)
        grads["w1"] = xs.T @ dh + l2 * params["w1"]
        grads["b1"] = dh.sum(axis=0)
        for n in params:
            m[n] = b1 * m[n] + (1 - b1) * grads[n]
            s[n] = b2 * s[n] + (1 - b2) * grads[n] ** 2
            params[n] -= lr * (m[n] / (1 - b1**t)) / (np.sqrt(s[n] / (1 - b2**t)) + 1e-8)
    return {
        "mean": mean.astype(np.float32),
        "std": std.astype(np.float32),
        **{n: v.astype(np.float32) for n, v in params.items()},
    }


def predict(weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    return LocalJudge(weights).probabilities(x).argmax(axis=1)  # type: ignore[no-any-return]


def accuracy(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    out = {"all": round(float((pred == y).mean()), 3)}
    for k, label in enumerate(LABELS):
        mask = y == k
        if mask.any():
            out[label] = round(float((pred[mask] == k).mean()), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    pairs = load_pairs()
    embedder = build_embedder(EmbedderSettings())
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    vecs = dict(zip(texts, embedder.embed(texts), strict=True))

    held = held_out(pairs, args.seed)
    train = [p for p in pairs if p[1] not in held]
    test = [p for p in pairs if p[1] in held]

    def rows(items: list[tuple[str, str, str]], augment: bool) -> tuple[list[Pair], np.ndarray]:
        out, ys = [], []
        for label, a, b in items:
            out.append(Pair(a, b, vecs[a], vecs[b]))
            ys.append(LABELS.index(label))  # type: ignore[arg-type]
            if augment:
                out.append(Pair(b, a, vecs[b], vecs[a]))
                ys.append(LABELS.index(REVERSED[label]))  # type: ignore[arg-type]
        return out, np.array(ys)

    train_pairs, y_train = rows(train, augment=True)
    test_pairs, y_test = rows(test, augment=False)
    x_train, x_test = features(train_pairs), features(test_pairs)
    # A reversed pair belongs to the group of the fact it was made from.
    train_groups = np.array(
        [p.earlier if n % 2 == 0 else p.later for n, p in enumerate(train_pairs)]
    )

    # Grouped 5-fold CV over the training part picks the size and the penalty.
    names = sorted(set(train_groups.tolist()))
    random.Random(args.seed + 1).shuffle(names)
    fold_of = {g: n % 5 for n, g in enumerate(names)}
    folds = np.array([fold_of[g] for g in train_groups])
    # Inputs: the lexical features alone, or with the embeddings' |u-v|, u*v.
    cols = {"lexical": slice(-N_LEXICAL, None), "embedding+lexical": slice(None)}
    grid = [(c, h, l2) for c in cols for h in (16, 48) for l2 in (1e-3, 1e-2, 3e-2)]
    scores = {}
    for inputs, hidden, l2 in grid:
        if inputs != "lexical" and hidden == 48:
            continue  # the wide model over 793 inputs overfits (and is slow to cross-validate)
        x = x_train[:, cols[inputs]]
        accs = []
        for f in range(5):
            w = train_mlp(x[folds != f], y_train[folds != f], hidden, l2, 400, args.seed)
            accs.append(float((predict(w, x[folds == f]) == y_train[folds == f]).mean()))
        scores[(inputs, hidden, l2)] = float(np.mean(accs))
        print(f"cv {inputs} hidden={hidden} l2={l2}: {scores[(inputs, hidden, l2)]:.3f}")
    results = {}
    best: dict[str, tuple[str, int, float]] = {}
    for inputs in cols:
        best[inputs] = max((k for k in scores if k[0] == inputs), key=lambda k: scores[k])
        _, hidden, l2 = best[inputs]
        w = train_mlp(x_train[:, cols[inputs]], y_train, hidden, l2, 400, args.seed)
        results[inputs] = (w, accuracy(predict(w, x_test[:, cols[inputs]]), y_test))
    # The choice is made on cross-validation, never on the held-out pairs.
    chosen = max(best.values(), key=lambda k: scores[k])
    inputs, hidden, l2 = chosen
    weights = results[inputs][0]

    words = WordJudge().judge(test_pairs)
    word_pred = np.array([LABELS.index(j.label) for j in words])

    report = {
        "pairs": len(pairs),
        "train_pairs": len(train),
        "held_out_pairs": len(test),
        "held_out_labels": dict(Counter(label for label, _, _ in test)),
        "chosen": {
            "inputs": inputs,
            "hidden": hidden,
            "l2": l2,
            "cv_accuracy": round(scores[chosen], 3),
        },
        "cv_accuracy": {f"{i} h{h} l2={r}": round(v, 3) for (i, h, r), v in scores.items()},
        "held_out_accuracy": {
            **{f"mlp over {i}": acc for i, (_, acc) in results.items()},
            "word_lists": accuracy(word_pred, y_test),
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "judge.npz", **weights)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
