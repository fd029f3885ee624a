"""A long-term fact's sources, shown with it among a search's hits (pure).

The consolidator links each fact it promotes to the short-term entries and
journal events it was distilled from (``derived_from`` edges, read with the
fact). A question whose answer two turns give together (LoCoMo's
multi-hop) gains from the fact that joins them only if the turns come with
it: the fact says "Caroline moved from Sweden four years ago", the question
asks where she lived before and when she moved. So each fact hit carries its
sources (``Hit.sources``), each scored for the query on its own:

- the score is the source's fused relevance to the query (as
  ``score_detail["relevance"]`` of a hit): what the search found about it
  when it found it, else its cosine alone (``Normaliser.dense_relevance``);
- of the first ``MAX_READ`` a fact names, at most ``MAX_SOURCES``, the best
  scored first (ties: the order the fact names them), so that a fact
  promoted from forty turns adds three;
- a source no longer stored (an expired entry, an erased event) is left out,
  a ``private`` journal event is never shown, a ``summary`` one as its
  summary line (``halls.recall.journal.shown``).

Sources are evidence beside their fact, not hits: they do not enter the
ranked list (merging them was measured on LoCoMo; see docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from halls.models import Hit, JournalEvent, LongFact, Record, Source
from halls.recall.fusion import Normaliser, cosines
from halls.recall.journal import shown

MAX_SOURCES = 3
# The sources of one fact read and scored, the first it names: a fact
# confirmed by hundreds of entries costs a search no more than this.
MAX_READ = 32
# Journal events keep no vectors: those a search may show as sources are
# embedded with it, at most this many per search (the first its facts name).
MAX_JOURNAL = 8


def derived(hits: Sequence[Hit], records: Mapping[str, Record]) -> dict[str, list[str]]:
    """Per fact hit, the ids it derives from (as the store read them with the fact)."""
    out: dict[str, list[str]] = {}
    for h in hits:
        r = records.get(h.id)
        if h.tier == "long" and isinstance(r, LongFact) and r.derived_from:
            out[h.id] = list(dict.fromkeys(r.derived_from))[:MAX_READ]
    return out


def journal_ids(wanted: Mapping[str, Sequence[str]]) -> list[str]:
    """The journal events among the sources, the first ``MAX_JOURNAL`` named."""
    ids = dict.fromkeys(i for srcs in wanted.values() for i in srcs if i.startswith("j_"))
    return list(ids)[:MAX_JOURNAL]


def scored(
    vectors: Mapping[str, np.ndarray], query: np.ndarray, norm: Normaliser
) -> dict[str, float]:
    """The relevance of each record no search scored, from its cosine alone."""
    found = cosines(list(vectors.values()), query)
    return dict(zip(vectors, norm.dense_relevance(found), strict=True))


def choose(
    wanted: Mapping[str, Sequence[str]], scores: Mapping[str, float]
) -> dict[str, list[str]]:
    """Per fact, its ``MAX_SOURCES`` best scored sources (ties: the order it names them).

    A source with no score is not stored (or, a journal event, not read):
    it is left out.
    """
    out = {}
    for fact, ids in wanted.items():
        have = [i for i in ids if i in scores]
        order = {i: n for n, i in enumerate(have)}
        out[fact] = sorted(have, key=lambda i: (-scores[i], order[i]))[:MAX_SOURCES]
    return out


def attach(
    hits: Sequence[Hit],
    chosen: Mapping[str, Sequence[str]],
    records: Mapping[str, Record],
    scores: Mapping[str, float],
) -> list[Hit]:
    """``hits`` with each fact's ``chosen`` sources set, those read and shown."""
    out = []
    for h in hits:
        shown = [records[i] for i in chosen.get(h.id, ()) if i in records and _shown(records[i])]
        sources = [_source(r, scores.get(r.id, 0.0)) for r in shown]
        out.append(h.model_copy(update={"sources": sources}) if sources else h)
    return out


def _shown(record: Record) -> bool:
    return not (isinstance(record, JournalEvent) and record.visibility == "private")


def _source(record: Record, score: float) -> Source:
    r = shown(record) if isinstance(record, JournalEvent) else record
    return Source(
        id=r.id,
        tier=r.tier,  # type: ignore[attr-defined]
        content=r.content,  # type: ignore[attr-defined]
        occurred_at=r.occurred_at,
        metadata=r.metadata,
        score=round(score, 6),
    )
