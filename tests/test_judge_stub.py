"""Any judge drives a whole run: the planner reads judgements, never words.

A stub judge that answers from a table (and gives no pair facts) runs the
default engine's plan over a real SQLite store with the real embedder: what
becomes a fact is what the stub read, whatever the words say.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from halls.config import ConsolidatorSettings
from halls.consolidate.engine import Inputs, Plan
from halls.consolidate.heuristic import HeuristicDecider
from halls.consolidate.judge import Judgement, Pair
from halls.consolidate.plan import build_plan
from halls.consolidate.runner import Runner
from halls.models import ShortEntry, new_id, to_datetime
from halls.store.sqlite import SQLiteStore

NOW = 1_780_000_000.0
DAY = 86_400.0


class TableJudge:
    """Reads a pair ``same`` when both statements are in one group of the table,
    else ``unrelated``; it never looks at a word."""

    name = "table"

    def __init__(self, groups: list[set[str]]) -> None:
        self.groups = groups
        self.asked = 0

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        self.asked += len(pairs)
        return [
            Judgement("same", 0.99, self.name, (0.99, 0.0, 0.0, 0.01))
            if any({p.earlier, p.later} <= g for g in self.groups)
            else Judgement("unrelated", 0.99, self.name, (0.01, 0.0, 0.0, 0.99))
            for p in pairs
        ]


class Engine:
    name = "heuristic"

    def __init__(self, judge: TableJudge) -> None:
        self.judge = judge

    def plan(self, inputs: Inputs) -> Plan:
        return build_plan(inputs, HeuristicDecider(inputs, self.judge))


def _run(
    tmp_path: Path, embedder: Any, judge: TableJudge, said: list[tuple[float, str]]
) -> list[str]:
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    try:
        made = [
            ShortEntry(
                id=new_id("short"),
                content=text,
                created_at=to_datetime(NOW - days * DAY),  # type: ignore[arg-type]
                occurred_at=to_datetime(NOW - days * DAY),  # type: ignore[arg-type]
            )
            for days, text in said
        ]
        store.add_short(made, embedder.embed([e.content for e in made]))
        Runner(store, Engine(judge), ConsolidatorSettings(), embedder.embed, lambda: NOW).run()
        return sorted(f.content for f in store.list_facts("active", 100, 0))
    finally:
        store.close()


SAID = [
    (3.0, "Priya takes her coffee black"),
    (1.0, "No milk or sugar in Priya's coffee, ever"),
    (2.0, "The staging server runs Ubuntu 22.04"),
]


def test_what_the_stub_reads_as_one_statement_becomes_one_fact(tmp_path: Path, embedder) -> None:
    """Two phrasings read as the same, said on two days, make one fact; the one-off
    stays in short-term memory."""
    judge = TableJudge([{SAID[0][1], SAID[1][1]}])
    facts = _run(tmp_path, embedder, judge, SAID)
    assert len(facts) == 1 and "Priya" in facts[0]
    assert judge.asked > 0


def test_a_stub_that_reads_nothing_alike_promotes_nothing(tmp_path: Path, embedder) -> None:
    """The same statements, read apart by the stub: each was said once, nothing is kept,
    though the words and the embeddings say the two coffee statements are one."""
    judge = TableJudge([])
    assert _run(tmp_path, embedder, judge, SAID) == []
