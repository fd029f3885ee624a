"""Questions a store cannot answer: does recall say so (``halls bench locomo --foreign``)?

Each LoCoMo store is asked the other conversations' questions (about other
people) and the team's general-knowledge questions (``data/general_knowledge.yaml``).
Every hit is irrelevant to them, so the right answer is no hit at all: the
figure is the share of questions whose hits all fall below ``min_relevance``.
A question is asked once with ``min_relevance`` 0, and the hits' relevance is
compared with the threshold here: the server applies the same per-hit test
to the same ranking, so this is what it returns at that threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import httpx
import yaml

# Each question asks for as many hits as the R@10 it is reported beside.
N_RESULTS = 10


def general_questions() -> list[str]:
    """The general-knowledge questions (a list of strings in the package data)."""
    text = resources.files("halls.bench").joinpath("data/general_knowledge.yaml").read_text("utf-8")
    questions = yaml.safe_load(text)
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise ValueError("general_knowledge.yaml must be a list of questions")
    return questions


def features(hit: dict[str, Any]) -> list[float | None]:
    """[cosine, bm25, best cosine, best bm25, relevance] of a hit as ``/search`` returns it."""
    d = hit["score_detail"]
    return [d.get("cosine"), d.get("bm25"), d["best_cosine"], d["best_bm25"], hit["relevance"]]


def ask(
    client: httpx.Client,
    store: str,
    question: str,
    n_results: int,
    check: Callable[[httpx.Response, int, str], Any],
) -> list[dict[str, Any]]:
    """The hits of one search, every one (``min_relevance`` 0), not counted as recalled."""
    body = {"query": question, "n_results": n_results, "reinforce": False, "min_relevance": 0.0}
    response = client.post("/search", params={"store": store}, json=body)
    return check(response, 200, "search")["results"]


def clears(relevance: float | None, min_relevance: float) -> bool:
    """Whether the server returns a hit of this relevance at ``min_relevance``.

    None (an embedder the model was not fitted for) filters nothing.
    """
    return relevance is None or relevance >= min_relevance


def no_hit_share(asked: Sequence[dict[str, Any]], min_relevance: float) -> float:
    """The share of questions none of whose hits reach ``min_relevance``."""
    if not asked:
        return 0.0
    silent = sum(not any(clears(f[-1], min_relevance) for f in q["hits"]) for q in asked)
    return round(silent / len(asked), 4)


def summary(asked: Sequence[dict[str, Any]], min_relevance: float) -> dict[str, Any]:
    """Per kind (foreign, general) and overall: how many, and the share with no hit."""
    out: dict[str, Any] = {}
    for kind in ("foreign", "general"):
        members = [q for q in asked if q["kind"] == kind]
        out[kind] = {"n": len(members), "no_hit": no_hit_share(members, min_relevance)}
    out["overall"] = {"n": len(asked), "no_hit": no_hit_share(asked, min_relevance)}
    return out
