"""What the consolidator promotes from real conversation, scored against LoCoMo.

``halls bench dreams --locomo FILE`` drives a live server as a user
would: each conversation of a LoCoMo file goes into its own store, every turn
one short-term entry ("Speaker: text", the session's date-time as
``occurred_at``, the turn's ``dia_id`` in metadata, as ``halls bench
locomo`` writes them); then one ``POST /consolidate/run`` per store. The
facts the run creates (``promote`` and ``supersede`` actions) are scored
against LoCoMo's ``observation`` field: per session, the facts an annotator
model drew from the dialog, each citing the turns it rests on ("D1:3").

- A promoted fact is *substantive* when a turn it derives from (its
  ``derived_from`` short-term entries, mapped to their ``dia_id``) is cited
  by an observation. **Precision** is the share of substantive facts.
- By content (:mod:`halls.bench.content`, given an encoder): a fact is
  *good* when it says what an observation of its conversation says; the
  ``content`` figures are the share of good facts, good facts per
  conversation and the share of observations some fact says.
- The **chance level** is the share of cited turns among all turns: the
  precision of facts drawn from turns at random.
- **Junk** counts facts that are a greeting, thanks, farewell,
  acknowledgement or question (the dialogue-act rules of
  ``halls.consolidate.dialogue_acts`` applied to the fact's text), and
  **raw turns** those that still carry a speaker label ("Caroline: ...").

Scoring is a pure function (:func:`score_facts`), testable without a server.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from halls.bench import content, locomo
from halls.bench.perf import BenchError, machine
from halls.consolidate.dialogue_acts import is_formula, is_question, strip_edges
from halls.consolidate.speaker import speaker_of
from halls.errors import InvalidInput

STORE_PREFIX = "dreams-locomo-"
BATCH = 500

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Fact:
    text: str
    turns: tuple[str, ...]  # the dia_ids it derives from


@dataclass(frozen=True)
class Sample:
    conversation: locomo.Conversation
    cited: set[str]  # the turns its observations cite
    observations: tuple[str, ...]  # their text, to score facts by content


def cited_turns(sample: dict[str, Any], known: Collection[str]) -> tuple[set[str], int]:
    """The turns LoCoMo's observations cite, and how many citations named no turn."""
    cited: set[str] = set()
    bad = 0
    observation = sample.get("observation")
    if not isinstance(observation, dict):
        raise InvalidInput(
            f"sample {sample.get('sample_id', '?')} has no 'observation' field to score against"
        )
    for session in observation.values():
        for items in (session or {}).values():
            for item in items or []:
                evidence = item[1] if isinstance(item, list | tuple) and len(item) > 1 else []
                raw = evidence if isinstance(evidence, list) else [evidence]
                ids, skipped = locomo.normalise_evidence([str(x) for x in raw], known)
                cited.update(ids)
                bad += skipped
    return cited, bad


def is_junk(text: str) -> bool:
    """A greeting, thanks, farewell, acknowledgement or question, by its form."""
    body = speaker_of(text)[1]
    stripped = strip_edges(body)
    return is_question(body) or is_formula(body) or not stripped or is_formula(stripped)


def score_facts(facts: Sequence[Fact], cited: Collection[str], n_turns: int) -> dict[str, Any]:
    """Precision against the cited turns, chance level, junk and raw-turn counts."""
    substantive = sum(1 for f in facts if set(f.turns) & set(cited))
    return {
        "facts": len(facts),
        "substantive": substantive,
        "precision": round(substantive / len(facts), 4) if facts else None,
        "chance": round(len(cited) / n_turns, 4) if n_turns else None,
        "junk": sum(1 for f in facts if is_junk(f.text)),
        "raw_turns": sum(1 for f in facts if speaker_of(f.text)[0] is not None),
    }


def load(path: Path) -> list[Sample]:
    """Conversations, the turns their observations cite, and the observations."""
    conversations = locomo.load(path)
    samples = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for conv, sample in zip(conversations, samples, strict=True):
        known = {t.dia_id for s in conv.sessions for t in s}
        cited, _ = cited_turns(sample, known)
        out.append(Sample(conv, cited, tuple(content.observations(sample))))
    return out


def _check(response: httpx.Response, status: int, what: str) -> Any:
    if response.status_code != status:
        raise BenchError(f"{what}: HTTP {response.status_code}: {response.text[:200]}")
    return response.json()


def run(
    url: str,
    data: Sequence[Sample],
    *,
    token: str | None = None,
    progress: Progress | None = None,
    encoder: content.Encoder | None = None,
) -> dict[str, Any]:
    """Write each conversation as short-term turns, consolidate, score what is promoted.

    With an ``encoder``, also by content (``content`` in the result, and per
    conversation); without one, ``content`` says why it is missing.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    report = progress or (lambda phase, done, total: None)
    per_conversation: list[dict[str, Any]] = []
    all_facts: list[Fact] = []
    all_cited = 0
    all_turns = 0
    run_seconds = 0.0
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        for n, sample in enumerate(data):
            conv, cited = sample.conversation, sample.cited
            store = {"store": STORE_PREFIX + (conv.sample_id or f"sample-{n}")}
            turns = [t for s in conv.sessions for t in s]
            dia_of: dict[str, str] = {}
            for start in range(0, len(turns), BATCH):
                chunk = turns[start : start + BATCH]
                items = [
                    {
                        "content": t.text,
                        "occurred_at": t.occurred_at,
                        "metadata": {"dia_id": t.dia_id},
                    }
                    for t in chunk
                ]
                ids = _check(
                    client.post("/short/batch", params=store, json={"items": items}), 201, "ingest"
                )["ids"]
                dia_of.update(zip(ids, (t.dia_id for t in chunk), strict=True))
            t0 = time.perf_counter()
            record = _check(client.post("/consolidate/run", params=store), 201, "consolidate")
            run_seconds += time.perf_counter() - t0
            facts = [
                Fact(
                    str(a["after"]["content"]),
                    tuple(dia_of[i] for i in a.get("inputs", []) if i in dia_of),
                )
                for a in record["actions"]
                if a["kind"] in ("promote", "supersede") and a.get("after")
            ]
            scores = score_facts(facts, cited, len(turns))
            per_conversation.append(
                {
                    "conversation": conv.sample_id,
                    "turns": len(turns),
                    "cited_turns": len(cited),
                    **scores,
                    "promoted": [
                        {
                            "text": f.text,
                            "turns": list(f.turns),
                            "cited": bool(set(f.turns) & cited),
                        }
                        for f in facts
                    ],
                }
            )
            all_facts += facts
            all_cited += len(cited)
            all_turns += len(turns)
            report("conversations", n + 1, len(data))
    overall = score_facts(all_facts, [], all_turns)
    substantive = sum(c["substantive"] for c in per_conversation)
    overall.update(
        substantive=substantive,
        precision=round(substantive / len(all_facts), 4) if all_facts else None,
        chance=round(all_cited / all_turns, 4) if all_turns else None,
        min_facts_per_conversation=min((c["facts"] for c in per_conversation), default=0),
    )
    return {
        "benchmark": "dreams-locomo",
        "conversations": [s.conversation.sample_id for s in data],
        "turns": all_turns,
        "run_seconds": round(run_seconds, 2),
        "overall": overall,
        "content": _by_content(data, per_conversation, encoder),
        "per_conversation": per_conversation,
        "machine": machine(),
    }


def _by_content(
    data: Sequence[Sample], per_conversation: list[dict[str, Any]], encoder: content.Encoder | None
) -> dict[str, Any]:
    """The content figures; each conversation and promoted fact gets its own share."""
    if encoder is None:
        return {"encoder": dict(content.ENCODER), "skipped": content.NEEDS}
    # Keyed by position: two samples may lack (or share) a sample_id.
    facts = {str(n): [p["text"] for p in c["promoted"]] for n, c in enumerate(per_conversation)}
    said = {str(n): s.observations for n, s in enumerate(data)}
    figures = content.score(facts, said, encoder)
    for n, conv in enumerate(per_conversation):
        mine = figures["per_conversation"][str(n)]
        conv["content"] = {
            "good": mine["good"],
            "precision": round(mine["good"] / mine["facts"], 4) if mine["facts"] else None,
            "observations": mine["observations"],
            "covered": mine["covered"],
            "coverage": round(mine["covered"] / mine["observations"], 4)
            if mine["observations"]
            else None,
        }
        for fact, cosine, good in zip(conv["promoted"], mine["cosines"], mine["said"], strict=True):
            fact["cosine"] = cosine
            fact["good"] = good
    return {k: v for k, v in figures.items() if k != "per_conversation"}


# Two-line headers: with the content columns the table still fits 110 columns.
TABLE_HEADERS = (
    "conversation",
    "turns",
    "facts",
    "substantive",
    "precision",
    "chance",
    "junk",
    "raw\nturns",
    "good",
    "content\nprecision",
    "coverage",
)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table_rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per conversation and an overall row; content columns "-" when skipped."""
    overall = {"conversation": "overall", "turns": result["turns"], **result["overall"]}
    if "skipped" not in result["content"]:
        overall["content"] = result["content"]
    rows: list[tuple[str, ...]] = []
    for c in [*result["per_conversation"], overall]:
        by_content = c.get("content", {})
        rows.append(
            (
                str(c["conversation"]),
                str(c["turns"]),
                str(c["facts"]),
                str(c["substantive"]),
                _share(c["precision"]),
                _share(c["chance"]),
                str(c["junk"]),
                str(c["raw_turns"]),
                str(by_content.get("good", "-")),
                _share(by_content.get("precision")),
                _share(by_content.get("coverage")),
            )
        )
    return rows


def content_line(result: dict[str, Any]) -> str:
    """What the content columns mean, with the encoder named, or why they are empty."""
    figures = result["content"]
    enc = figures["encoder"]
    named = f"{enc['library']} {enc['model']} {enc['dtype']}, cosine >= {enc['threshold']:.2f}"
    if "skipped" in figures:
        return f"{figures['skipped']} ({named})"
    per = figures["good_per_conversation"]
    return (
        f"content: a fact is good when it says what an observation says ({named}); "
        f"precision {_share(figures['precision'])} ({figures['good']} of {figures['facts']}), "
        f"{'-' if per is None else f'{per:.1f}'} good facts per conversation, "
        f"coverage {_share(figures['coverage'])} ({figures['covered']} of "
        f"{figures['observations']} observations)"
    )
