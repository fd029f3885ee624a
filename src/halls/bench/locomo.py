"""The recall benchmark on LoCoMo: does halls find the turns that answer a question?

LoCoMo (Maharana et al., ACL 2024) holds very long two-person conversations
with questions whose evidence is a list of dialog turns. The protocol drives
halls as a user would: a live server, one store per conversation, every turn
one ``POST /short/batch`` item ("Speaker: text", plus " [image: caption]"
when the turn shared a picture; the session's date-time as ``occurred_at``;
the turn's ``dia_id`` in metadata), and every question with evidence in
categories 1-4 one ``POST /search``, one after another in the data's order
and with reinforcement as the server has it (``"reinforce": true``), as an
agent asks (``reinforce=False``: every question of the same memory). Scoring is a pure function
(:func:`score_ranking`), so that it can be tested without a server.

Each question is asked with ``min_relevance`` 0, and scored twice: on every
hit, and on the hits whose relevance reaches ``min_relevance`` (the
default's, unless given), which is what the server returns at that
threshold (its test is per hit, on the same ranking). With ``foreign``, each
store is also asked questions it cannot answer (``halls.bench.foreign``).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from halls.bench import foreign as foreign_mod
from halls.bench.perf import BenchError, latency_summary, machine
from halls.errors import InvalidInput
from halls.models import RETRIEVERS
from halls.recall.relevance import DEFAULT_MIN_RELEVANCE

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10, 20)
NDCG_AT = 10
N_RESULTS = 20
STORE_PREFIX = "locomo-"

_SESSION_KEY = re.compile(r"^session_(\d+)$")
# "D1:3", and the malformed spellings seen in the data: "D:11:26", "D30:05".
_DIA_ID = re.compile(r"^D:?(\d+):0*(\d+)$")

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total), phase 'ingest' or 'search'."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    occurred_at: str


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    sample_id: str
    sessions: list[list[Turn]]
    questions: list[Question]
    skipped: dict[str, int] = field(default_factory=dict)


def session_time(text: str) -> str:
    """ "2:14 pm on 9 May, 2023" -> "2023-05-09T14:14:00+00:00"."""
    try:
        when = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        raise InvalidInput(f"unrecognised session date-time '{text[:60]}'") from None
    return when.replace(tzinfo=UTC).isoformat()


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def normalise_evidence(raw: Iterable[str], known: Collection[str]) -> tuple[list[str], int]:
    """Evidence ids as turn ids, and how many named no turn of the conversation.

    A string may join several ids ("D8:6; D9:17", "D1:3 D1:5"); malformed
    ones ("D:11:26", "D30:05") are read as meant; the rest are skipped.
    """
    out: list[str] = []
    skipped = 0
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item)):
            if not token:
                continue
            m = _DIA_ID.match(token)
            dia = f"D{int(m.group(1))}:{int(m.group(2))}" if m else None
            if dia is None or dia not in known:
                skipped += 1
            elif dia not in out:
                out.append(dia)
    return out, skipped


def load(path: Path) -> list[Conversation]:
    """Read LoCoMo samples, normalising evidence and counting what is skipped."""
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"no LoCoMo data at {path}") from None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read LoCoMo data from {path.name}: {exc}") from None
    if not isinstance(samples, list):
        raise InvalidInput("LoCoMo data must be a JSON list of samples")
    out = []
    for sample in samples:
        try:
            out.append(_conversation(sample))
        except (KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"a LoCoMo sample lacks a field: {exc}") from None
    return out


def _conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    sessions = []
    for n in numbers:
        when = session_time(conv[f"session_{n}_date_time"])
        sessions.append([Turn(t["dia_id"], turn_text(t), when) for t in conv[f"session_{n}"]])
    known = {t.dia_id for s in sessions for t in s}
    questions = []
    skipped = {"evidence_ids": 0, "no_evidence": 0, "category_5": 0}
    for qa in sample["qa"]:
        category = int(qa["category"])
        if category not in CATEGORIES:
            skipped["category_5"] += 1
            continue
        evidence, bad = normalise_evidence(qa.get("evidence") or [], known)
        skipped["evidence_ids"] += bad
        if not evidence:
            skipped["no_evidence"] += 1
            continue
        questions.append(Question(str(qa["question"]), category, tuple(evidence)))
    return Conversation(str(sample.get("sample_id", "")), sessions, questions, skipped)


def score_ranking(ranked: Sequence[str], relevant: Collection[str]) -> dict[str, float]:
    """Recall@k (share of the relevant ids in the top k) and binary nDCG@10."""
    rel = set(relevant)
    if not rel:
        raise ValueError("a question needs at least one relevant id")
    seen: dict[str, None] = {}
    for item in ranked:
        seen.setdefault(item, None)
    order = list(seen)
    out = {f"recall@{k}": len(rel.intersection(order[:k])) / len(rel) for k in KS}
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(order[:NDCG_AT]) if item in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), NDCG_AT)))
    out[f"ndcg@{NDCG_AT}"] = dcg / ideal
    return out


def with_sources(hits: Sequence[dict[str, Any]], fact: bool = True) -> list[str]:
    """The turns of ``hits`` in order, each hit's ``sources`` right after it.

    A fact names no turn: it keeps a place of its own (its id) and the
    turns it derives from (its ``sources``, best first) follow it, as if
    they were hits ranked just below it; ``fact`` False: they take its
    place instead. A turn counts once, at its first place
    (``score_ranking``), so recall@k over this list is what a list of k
    hits would find with the sources merged into it.
    """
    out = []
    for h in hits:
        sources = [turn_of(s) for s in h.get("sources", [])]
        out += [turn_of(h), *sources] if fact or not sources else sources
    return out


def score_covered(hits: Sequence[dict[str, Any]], relevant: Collection[str]) -> dict[str, float]:
    """Recall@k counting, for the top k hits, their turns and their sources' turns.

    The list as the server returns it (sources beside their fact, no hit
    pushed out): k hits may cover more than k turns.
    """
    rel = set(relevant)
    out = {}
    for k in KS:
        seen = {turn_of(h) for h in hits[:k]}
        seen |= {turn_of(s) for h in hits[:k] for s in h.get("sources", [])}
        out[f"recall@{k}"] = len(rel & seen) / len(rel)
    return out


def turn_of(record: dict[str, Any]) -> str:
    """The turn a hit or source is (its ``dia_id``); a fact, which is none, its own id."""
    dia = record["metadata"].get("dia_id")
    return str(dia) if dia is not None else str(record["id"])


def aggregate(rows: Sequence[tuple[int, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean of each metric per category name and overall, with the question count."""
    groups: dict[str, list[dict[str, float]]] = {"overall": []}
    for category, scores in rows:
        groups.setdefault(CATEGORIES[category], []).append(scores)
        groups["overall"].append(scores)
    out = {}
    for name in [*CATEGORIES.values(), "overall"]:
        members = groups.get(name, [])
        if not members:
            continue
        means = {m: round(sum(s[m] for s in members) / len(members), 4) for m in members[0]}
        out[name] = {"n": len(members), **means}
    return out


def _check(response: httpx.Response, status: int, what: str) -> Any:
    if response.status_code != status:
        raise BenchError(f"{what}: HTTP {response.status_code}: {response.text[:200]}")
    return response.json()


def run(
    url: str,
    conversations: Sequence[Conversation],
    *,
    retriever: str = "full",
    limit_questions: int | None = None,
    token: str | None = None,
    progress: Progress | None = None,
    foreign: bool = False,
    min_relevance: float = DEFAULT_MIN_RELEVANCE,
    reinforce: bool = True,
    consolidate: bool = False,
) -> dict[str, Any]:
    """Ingest every conversation into its own store, ask its questions, score them.

    ``consolidate``: one ``POST /consolidate/run`` per store (the server's
    defaults) after its turns are in, before its first question.
    """
    if retriever not in RETRIEVERS:
        raise InvalidInput(f"retriever must be one of {', '.join(RETRIEVERS)}")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    asked = [
        c.questions[:limit_questions] if limit_questions else c.questions for c in conversations
    ]
    n_turns = sum(len(s) for c in conversations for s in c.sessions)
    n_questions = sum(len(q) for q in asked)
    report = progress or (lambda phase, done, total: None)
    rows: list[tuple[int, dict[str, float]]] = []
    source_rows: list[tuple[int, dict[str, float]]] = []
    covered_rows: list[tuple[int, dict[str, float]]] = []
    instead_rows: list[tuple[int, dict[str, float]]] = []
    kept_rows: list[tuple[int, dict[str, float]]] = []
    per_question: list[dict[str, Any]] = []
    latencies: list[float] = []
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        started = time.perf_counter()
        done = 0
        for conv in conversations:
            store = {"store": STORE_PREFIX + (conv.sample_id or "sample")}
            for session in conv.sessions:
                items = [
                    {
                        "content": t.text,
                        "occurred_at": t.occurred_at,
                        "metadata": {"dia_id": t.dia_id},
                    }
                    for t in session
                ]
                response = client.post("/short/batch", params=store, json={"items": items})
                _check(response, 201, "ingest")
                done += len(items)
                report("ingest", done, n_turns)
        ingest_seconds = time.perf_counter() - started
        facts = 0
        if consolidate:
            for n, conv in enumerate(conversations, start=1):
                store = {"store": STORE_PREFIX + (conv.sample_id or "sample")}
                record = _check(client.post("/consolidate/run", params=store), 201, "consolidate")
                facts += sum(1 for a in record["actions"] if a["kind"] == "promote")
                report("consolidate", n, len(conversations))
        consolidate_seconds = time.perf_counter() - started - ingest_seconds
        done = 0
        for conv, questions in zip(conversations, asked, strict=True):
            store = {"store": STORE_PREFIX + (conv.sample_id or "sample")}
            for q in questions:
                # As an agent asks: whatever a search reinforces weighs on the
                # next question's ranking (issue 52: a popularity bias hid here).
                body = {
                    "query": q.question,
                    "n_results": N_RESULTS,
                    "retriever": retriever,
                    "reinforce": reinforce,
                    "min_relevance": 0.0,
                }
                t0 = time.perf_counter()
                response = client.post("/search", params=store, json=body)
                latencies.append((time.perf_counter() - t0) * 1000)
                hits = _check(response, 200, "search")["results"]
                ranked = [turn_of(h) for h in hits]
                scores = score_ranking(ranked, q.evidence)
                rows.append((q.category, scores))
                source_rows.append((q.category, score_ranking(with_sources(hits), q.evidence)))
                instead_rows.append(
                    (q.category, score_ranking(with_sources(hits, fact=False), q.evidence))
                )
                covered_rows.append((q.category, score_covered(hits, q.evidence)))
                kept = [
                    d
                    for d, h in zip(ranked, hits, strict=True)
                    if foreign_mod.clears(h["relevance"], min_relevance)
                ]
                kept_rows.append((q.category, score_ranking(kept, q.evidence)))
                per_question.append(
                    {
                        "conversation": conv.sample_id,
                        "category": q.category,
                        "question": q.question,
                        "evidence": list(q.evidence),
                        "top": ranked[:10],
                        # [dia_id, cosine, bm25, best cosine, best bm25,
                        # relevance] of every hit, for scripts/fit_relevance.py.
                        "hits": [
                            [d, *foreign_mod.features(h)] for d, h in zip(ranked, hits, strict=True)
                        ],
                        **scores,
                    }
                )
                done += 1
                report("search", done, n_questions)
        asked_foreign = _foreign(client, conversations, asked, report) if foreign else []
    skipped: dict[str, int] = {}
    for conv in conversations:
        for key, value in conv.skipped.items():
            skipped[key] = skipped.get(key, 0) + value
    return {
        "benchmark": "locomo",
        "retriever": retriever,
        "reinforce": reinforce,
        "conversations": [c.sample_id for c in conversations],
        "turns": n_turns,
        "questions": n_questions,
        "skipped": skipped,
        "ingest": {
            "seconds": round(ingest_seconds, 2),
            "turns_per_second": round(n_turns / ingest_seconds, 1) if ingest_seconds else None,
        },
        "search_latency": latency_summary(latencies) if latencies else {},
        **(
            {"consolidate": {"seconds": round(consolidate_seconds, 2), "promoted": facts}}
            if consolidate
            else {}
        ),
        "scores": aggregate(rows),
        "scores_with_sources": aggregate(source_rows),
        "scores_covered": aggregate(covered_rows),
        "scores_sources_instead": aggregate(instead_rows),
        "min_relevance": min_relevance,
        "scores_at_min_relevance": aggregate(kept_rows),
        **(
            {
                "foreign": foreign_mod.summary(asked_foreign, min_relevance),
                "foreign_questions": asked_foreign,
            }
            if foreign
            else {}
        ),
        "machine": machine(),
        "per_question": per_question,
    }


def _foreign(
    client: httpx.Client,
    conversations: Sequence[Conversation],
    asked: Sequence[Sequence[Question]],
    report: Progress,
) -> list[dict[str, Any]]:
    """Each store asked the other conversations' questions and the general-knowledge ones."""
    general = foreign_mod.general_questions()
    plan = []
    for i, conv in enumerate(conversations):
        store = STORE_PREFIX + (conv.sample_id or "sample")
        for j, other in enumerate(conversations):
            if j != i:
                plan += [
                    (conv.sample_id, store, "foreign", other.sample_id, q.question)
                    for q in asked[j]
                ]
        plan += [(conv.sample_id, store, "general", "general", q) for q in general]
    out = []
    for done, (sample, store, kind, source, question) in enumerate(plan, start=1):
        hits = foreign_mod.ask(client, store, question, foreign_mod.N_RESULTS, _check)
        out.append(
            {
                "conversation": sample,
                "kind": kind,
                "source": source,
                "question": question,
                "hits": [foreign_mod.features(h) for h in hits],
            }
        )
        report("foreign", done, len(plan))
    return out


TABLE_METRICS = (*(f"recall@{k}" for k in KS), f"ndcg@{NDCG_AT}")


def table_rows(result: dict[str, Any], key: str = "scores") -> list[tuple[str, ...]]:
    """One row per category and overall: name, n, then each metric; last,
    overall again on the hits that clear ``min_relevance`` (``key`` "scores" only)."""
    rows = [
        (name, str(s["n"]), *(f"{s[m]:.3f}" for m in TABLE_METRICS))
        for name, s in result[key].items()
    ]
    if key != "scores":
        return rows
    kept = result["scores_at_min_relevance"]["overall"]
    label = f"overall >= {result['min_relevance']:g}"
    return [*rows, (label, str(kept["n"]), *(f"{kept[m]:.3f}" for m in TABLE_METRICS))]
