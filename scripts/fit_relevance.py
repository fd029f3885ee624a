"""Fit the relevance of a search's hits (``halls.recall.relevance``) on LoCoMo.

    python scripts/fit_relevance.py --data PATH/locomo_dev.json [--write]
    python scripts/fit_relevance.py --collected run.json [--write]

Runs ``halls bench locomo --foreign`` (a live server, one store per
conversation; or reads the JSON such a run wrote, ``--collected``), then:

- the rows: one per search. A store's own questions (categories 1-4, with
  evidence) are answerable (1); the other conversations' questions asked of
  it are not (0), and together weigh as much as the own ones. Features: the
  search's best cosine and ln(1 + its best BM25) (``score_detail``);
- a logistic regression (Newton's method, numpy; a small ridge keeps it
  finite), and the threshold: the highest ``min_relevance`` on a 0.01 grid
  whose own-question recall@10 on the fitting conversations is within
  ``--max-loss`` (half a point) of recall@10 with no threshold. Half a point
  rather than the 1 point allowed: with 1, held out, the loss was 1.2 points
  (conversations the fit did not see have their weak questions too);
- leave one conversation out: fitted and thresholded on the others (their
  stores, their questions), scored on the one left out: calibration (its
  own questions, and the foreign questions asked of its store or coming
  from it), its recall@5 and @10 with and without the threshold, and the
  share of foreign and of general-knowledge questions its store answers
  with no hit;
- with ``--write``, the fit on every conversation, with its threshold and the
  held-out figures, into ``src/halls/recall/data/relevance.json``.

The general-knowledge questions take no part in the fit or the threshold.
Deterministic: the same run gives the same coefficients.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from halls.bench import locomo, perf
from halls.recall.relevance import features_bm25

OUT = Path(__file__).resolve().parent.parent / "src/halls/recall/data/relevance.json"
GRID = np.round(np.arange(0.0, 0.9 + 1e-9, 0.01), 2)
RIDGE = 1e-3
NAMES = ("intercept", "best_cosine", "best_bm25")


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """[intercept, w...] of the weighted logistic regression of y on x (Newton-Raphson)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (weight * (p - y)) + RIDGE * w
        hess = (a * (weight * p * (1 - p))[:, None]).T @ a + RIDGE * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def search_features(hit: Sequence[Any]) -> list[float]:
    """[best cosine, ln(1 + best BM25)] of a recorded hit [cosine, bm25, best cos, best bm25]."""
    return [max(hit[2] or 0.0, 0.0), features_bm25(hit[3])]


def predict(w: np.ndarray, x: Sequence[Sequence[float]]) -> np.ndarray:
    if not len(x):
        return np.zeros(0)
    a = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-(w[0] + a @ w[1:])))


def own_x(q: dict[str, Any]) -> list[float]:
    # Own questions' hits are [dia_id, cosine, bm25, best cosine, best bm25, relevance].
    return search_features(q["hits"][0][1:])


def rows(
    own: Sequence[dict[str, Any]], asked: Sequence[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (1 own, 0 foreign) and weights (each side weighs the same)."""
    own = [q for q in own if q["hits"]]
    asked = [q for q in asked if q["hits"]]
    x = [own_x(q) for q in own] + [search_features(q["hits"][0]) for q in asked]
    y = [1.0] * len(own) + [0.0] * len(asked)
    share = len(own) / len(asked) if asked else 0.0
    weight = [1.0] * len(own) + [share] * len(asked)
    return np.asarray(x), np.asarray(y), np.asarray(weight)


def recall_at(questions: Sequence[dict[str, Any]], w: np.ndarray, t: float, k: int) -> float:
    """Mean recall@k over questions, on the hits of the searches whose relevance reaches t."""
    total = 0.0
    for q in questions:
        kept = [h[0] for h in q["hits"][:k]] if q["hits"] and predict(w, [own_x(q)])[0] >= t else []
        total += locomo.score_ranking(kept, q["evidence"])[f"recall@{k}"]
    return total / len(questions)


def threshold(questions: Sequence[dict[str, Any]], w: np.ndarray, max_loss: float) -> float:
    """The highest t of GRID whose recall@10 is within max_loss of that at 0."""
    base = recall_at(questions, w, 0.0, 10)
    best = 0.0
    for t in GRID:
        if recall_at(questions, w, float(t), 10) >= base - max_loss - 1e-12:
            best = float(t)
        else:
            break
    return best


def no_hit(asked: Sequence[dict[str, Any]], w: np.ndarray, t: float) -> float:
    if not asked:
        return 0.0
    silent = sum(not q["hits"] or predict(w, [search_features(q["hits"][0])])[0] < t for q in asked)
    return silent / len(asked)


def calibration(p: np.ndarray, y: np.ndarray, weight: np.ndarray, bins: int = 10) -> dict[str, Any]:
    """Weighted expected calibration error, Brier score, and the reliability table."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    table, ece, total = [], 0.0, weight.sum()
    for b in range(bins):
        m = which == b
        if not m.any():
            continue
        mean_p = float(np.average(p[m], weights=weight[m]))
        rate = float(np.average(y[m], weights=weight[m]))
        ece += weight[m].sum() / total * abs(mean_p - rate)
        table.append(
            {
                "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}",
                "searches": int(m.sum()),
                "predicted": round(mean_p, 4),
                "observed": round(rate, 4),
            }
        )
    brier = float(np.average((p - y) ** 2, weights=weight))
    return {"ece": round(ece, 4), "brier": round(brier, 4), "table": table}


def held_out(run: dict[str, Any], max_loss: float) -> dict[str, Any]:
    """Leave one conversation out: fit on the rest, score on it; pooled over folds."""
    own = run["per_question"]
    foreign = [q for q in run["foreign_questions"] if q["kind"] == "foreign"]
    general = [q for q in run["foreign_questions"] if q["kind"] == "general"]
    folds, xs, ys, ws = [], [], [], []
    sums = dict.fromkeys(("n", "r5", "r5_t", "r10", "r10_t"), 0.0)
    silent = {"foreign": [0.0, 0], "general": [0.0, 0]}
    for c in run["conversations"]:
        train = [q for q in own if q["conversation"] != c]
        test = [q for q in own if q["conversation"] == c]
        # Neither the held-out store nor its questions take part in the fit.
        seen = [q for q in foreign if c not in (q["conversation"], q["source"])]
        unseen = [q for q in foreign if c in (q["conversation"], q["source"])]
        w = fit(*rows(train, seen))
        t = threshold(train, w, max_loss)
        x, y, weight = rows(test, unseen)
        xs.append(predict(w, x))
        ys.append(y)
        ws.append(weight)
        fold: dict[str, Any] = {"conversation": c, "min_relevance": t}
        for k in (5, 10):
            fold[f"recall@{k}"] = round(recall_at(test, w, 0.0, k), 4)
            fold[f"recall@{k}_at_threshold"] = round(recall_at(test, w, t, k), 4)
            sums[f"r{k}"] += fold[f"recall@{k}"] * len(test)
            sums[f"r{k}_t"] += fold[f"recall@{k}_at_threshold"] * len(test)
        sums["n"] += len(test)
        for kind, pool in (("foreign", foreign), ("general", general)):
            # The questions asked of the held-out store.
            mine = [q for q in pool if q["conversation"] == c]
            share = no_hit(mine, w, t)
            fold[f"no_hit_{kind}"] = round(share, 4)
            silent[kind][0] += share * len(mine)
            silent[kind][1] += len(mine)
        folds.append(fold)
    n = sums["n"]
    return {
        "folds": folds,
        "recall@5": round(sums["r5"] / n, 4),
        "recall@5_at_threshold": round(sums["r5_t"] / n, 4),
        "recall@10": round(sums["r10"] / n, 4),
        "recall@10_at_threshold": round(sums["r10_t"] / n, 4),
        "no_hit_foreign": round(silent["foreign"][0] / silent["foreign"][1], 4),
        "no_hit_general": round(silent["general"][0] / silent["general"][1], 4),
        "calibration": calibration(np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="LoCoMo JSON (locomo_dev.json)")
    ap.add_argument("--collected", type=Path, help="JSON of `halls bench locomo --foreign --out`")
    ap.add_argument(
        "--max-loss", type=float, default=0.005, help="recall@10 given up, at most, when fitting"
    )
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    args = ap.parse_args()
    if args.collected is not None:
        run = json.loads(args.collected.read_text(encoding="utf-8"))
    elif args.data is not None:
        conversations = locomo.load(args.data)
        with perf.live_server() as server:
            run = locomo.run(server.url, conversations, foreign=True)
    else:
        ap.error("give --data or --collected")
    report = held_out(run, args.max_loss)
    print(json.dumps(report, indent=2))
    foreign = [q for q in run["foreign_questions"] if q["kind"] == "foreign"]
    w = fit(*rows(run["per_question"], foreign))
    t = threshold(run["per_question"], w, args.max_loss)
    named = ", ".join(f"{n} {v:.4f}" for n, v in zip(NAMES, w, strict=True))
    print(f"all conversations: {named}; min_relevance {t}")
    if args.write:
        out = {
            "command": "python scripts/fit_relevance.py --data PATH/locomo_dev.json --write",
            # The model whose cosines these are (halls' default embedder).
            "embedder": "all-MiniLM-L6-v2",
            "data": "LoCoMo dev (conv-26, conv-30, conv-41, conv-42, conv-43), halls bench "
            "locomo --foreign: each store's own questions (categories 1-4) against the other "
            "conversations' questions asked of it, weighed equally",
            "features": "the search's best cosine, ln(1 + its best BM25)",
            "coefficients": dict(zip(NAMES, (round(float(v), 6) for v in w), strict=True)),
            "min_relevance": t,
            "threshold_rule": f"highest on a 0.01 grid with recall@10 within {args.max_loss} "
            "of no threshold, on the fitting conversations",
            "held_out": {k: v for k, v in report.items() if k != "folds"},
            "folds": report["folds"],
        }
        OUT.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
