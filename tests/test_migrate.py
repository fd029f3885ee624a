"""``halls migrate``: SQLite -> PostgreSQL -> SQLite keeps every search answer.

A 10,000-memory store (the real model's vectors) with everything a store
holds (a consolidation run's fact, pinned, with its category, edges and
consolidated entries, a retired fact, recalls, loops, the journal, a brief,
a forget flag) is copied to PostgreSQL and back through the CLI; the same
questions get the same hits with the same scores from all three. A second
copy copies nothing; a dry run counts and writes nothing.
"""

from __future__ import annotations

import os
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halls import Memory, Settings
from halls.bench import corpus
from halls.cli import main
from halls.config import StorageSettings
from halls.embed import Embedder
from halls.models import LongFact, NewJournal, NewShort, new_id, to_datetime
from halls.store import open_backend

N = int(os.environ.get("HALLS_TEST_MIGRATE_N", "10000"))
PATHS = [
    "Chad prefers absolute paths in config files",
    "Chad likes to use absolute paths in his configs",
    "In configs, Chad wants paths written as absolute paths",
]


def answers(m: Memory, store: str, questions: list[str]) -> list[Any]:
    out = []
    for q in questions:
        for hidden in (False, True):
            # reinforce False: the questions must not change the recalls compared.
            hits = m.search(
                q, store=store, n_results=10, include_superseded=hidden, reinforce=False
            )
            out.append([(h.id, h.tier, round(h.score, 6)) for h in hits])
    return out


def kept(storage: StorageSettings, data_dir: Path, store: str) -> dict[str, Any]:
    """What the Store protocol holds beyond the service's lists: every fact (retired
    ones too) with its status, pin and category, and every record's recalls."""
    backend = open_backend(storage, data_dir)
    s = backend.open(store, False)
    try:
        facts = s.list_facts(None, 100, 0)
        ids = [e.id for e in s.list_short(N + 10, 0)] + [f.id for f in facts]
        ids += [lp.id for lp in s.list_loops(None, 100, 0)]
        # Every edge (sources, the names memories mention), as a set: each
        # backend lists one instant's edges in its own write order.
        edges = {
            (e.key, e.created_at)
            for i in range(0, len(ids), 900)
            for e in s.edges(ids[i : i + 900])
        }
        return {"facts": facts, "retention": s.retention(ids), "edges": edges}
    finally:
        s.close()
        backend.close()


def everything(m: Memory, store: str) -> dict[str, Any]:
    runs = m.list_runs(store=store, limit=100)
    return {
        "stats": m.stats(store=store)["counts"],
        "long": m.list_long(store=store, limit=100),
        "near": m.list_loops(store=store, limit=100),
        "journal": m.list_journal(store=store, limit=100),
        "runs": runs,
        "fingerprint": m.fingerprint_of(store),
    }


# One instant for every Memory here: recency counts in every score.
NOW = datetime(2025, 6, 1, tzinfo=UTC).timestamp()


def clock() -> float:
    return NOW


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow  # ~19 s: 10,000 entries each way
def test_sqlite_to_postgres_and_back_answers_alike(
    tmp_path: Path, embedder: Embedder, pg_dsn: str
) -> None:
    store = f"mig-{uuid.uuid4().hex[:8]}"
    here, back = tmp_path / "here", tmp_path / "back"
    settings = {"consolidator": {"mode": "external"}}
    rng = random.Random(13)
    start = datetime(2025, 3, 1, tzinfo=UTC)
    with Memory(Settings(data_dir=here, **settings), embedder=embedder, clock=clock) as m:
        # The consolidation first, on a few entries (it would read all 10,000).
        for day, text in enumerate(PATHS):
            m.remember(text, store=store, occurred_at=start - timedelta(days=3 - day))
        loop = m.add_loop("call the landlord about the studio floor", store=store)
        m.complete_loop(m.add_loop("renew the parking permit", store=store).id, store=store)
        m.journal([NewJournal(content="user: where do configs live?")], store=store)
        m.submit_brief("worked on configs", store=store, promote_hints=["absolute paths"])
        run = m.consolidate(store=store)
        assert run.status == "done" and run.counts.get("promote", 0) == 1
        [fact] = m.list_long(store=store)
        m.flag_forget(fact.id, "checking the copy", store=store)
        texts = corpus.memories(rng, N - len(PATHS))
        for i in range(0, len(texts), 1000):
            m.remember_many(
                [
                    NewShort(content=t, occurred_at=start + timedelta(minutes=5 * (i + n)))
                    for n, t in enumerate(texts[i : i + 1000])
                ],
                store=store,
            )
        questions = corpus.questions(random.Random(5), 12) + ["Where does Chad want paths?"]
        m.pin_fact(fact.id, store=store)
        for q in questions[:4]:  # uses (flushed when the Memory closes)
            for h in m.search(q, store=store, min_relevance=0.0)[:3]:
                opener = {"short": m.get_short, "near": m.get_loop}.get(h.tier, m.get_long)
                opener(h.id, store=store)  # opened by id: a use, reinforced
    # A retired fact (runs retire faded ones), written as a run would keep it.
    on_sqlite = StorageSettings()
    backend = open_backend(on_sqlite, here)
    s = backend.open(store, False)
    when = to_datetime(NOW - 400 * 86400)
    retired = LongFact(
        id=new_id("long"), content="Chad kept his configs on a floppy disk",
        category="fact", status="retired", first_seen=when, last_confirmed=when,
        created_at=when, occurred_at=when,
    )  # fmt: skip
    s.add_fact(retired, embedder.embed([retired.content])[0])
    s.close()
    backend.close()
    with Memory(Settings(data_dir=here, **settings), embedder=embedder, clock=clock) as m:
        expected = answers(m, store, questions)
        before = everything(m, store)
    held = kept(on_sqlite, here, store)
    assert loop.id and fact.derived_from
    facts = {f.id: f for f in held["facts"]}
    assert facts[fact.id].pinned and facts[fact.id].category
    assert facts[retired.id].status == "retired" and len(held["retention"]) >= 4

    pg = f"postgres:{pg_dsn}"
    counted = cli("migrate", "--from", f"sqlite:{here}", "--to", pg, "--store", store, "--dry-run")
    recalls = len(held["retention"])
    # The edges copied after the records: those the facts did not make as they
    # were added (the names every memory mentions, here).
    assert len(held["edges"]) > N
    edges = len([e for e in held["edges"] if e[0][2] == "mentions"])
    whole = (
        f"short {N}, near 2, long 2, recalls {recalls}, edges {edges}, journal 1, briefs 1, "
        "flags 1, runs 1, meta 2"
    )
    assert f"{store}: would copy {whole}\n" in counted
    on_pg = Settings(data_dir=tmp_path / "unused", storage={"backend": "postgres", "dsn": pg_dsn})
    with Memory(on_pg, embedder=embedder, clock=clock) as m:
        assert store not in m.stores(), "a dry run writes nothing"
    first = cli("migrate", "--from", f"sqlite:{here}", "--to", pg, "--store", store)
    assert first.replace("copied", "would copy") == counted
    again = cli("migrate", "--from", f"sqlite:{here}", "--to", pg, "--store", store)
    assert again.strip() == f"{store}: copied nothing"

    with Memory(on_pg, embedder=embedder, clock=clock) as m:
        assert everything(m, store) == before
        assert answers(m, store, questions) == expected
    assert kept(on_pg.storage, tmp_path / "unused", store) == held
    cli("migrate", "--from", pg, "--to", f"sqlite:{back}", "--store", store)
    assert cli("migrate", "--from", pg, "--to", f"sqlite:{back}").count("copied nothing") >= 1
    with Memory(Settings(data_dir=back, **settings), embedder=embedder, clock=clock) as m:
        assert everything(m, store) == before
        assert answers(m, store, questions) == expected
    assert kept(on_sqlite, back, store) == held


@pytest.mark.parametrize("spec", ["mysql:db", "sqlite:", "postgres"])
def test_bad_place_is_a_usage_error(tmp_path: Path, spec: str) -> None:
    result = CliRunner().invoke(main, ["migrate", "--from", spec, "--to", f"sqlite:{tmp_path}"])
    assert result.exit_code == 2 and "sqlite:DIR or postgres:" in result.output


def test_a_store_with_consolidated_records_but_no_run_migrates(
    tmp_path: Path, embedder: Embedder
) -> None:
    """An import writes consolidated records without a run record: migrate copies them too."""
    from halls.models import ShortEntry
    from halls.store import changes as ch

    here, there = tmp_path / "here", tmp_path / "there"
    settings = {"consolidator": {"mode": "external"}}
    with Memory(Settings(data_dir=here, **settings), embedder=embedder, clock=clock) as m:
        m.remember("Chad keeps every config path absolute", store="s")
    when = to_datetime(NOW)
    fact = LongFact(
        id=new_id("long"), content="Chad wants absolute config paths", category="preference",
        first_seen=when, last_confirmed=when, created_at=when, occurred_at=when,
    )  # fmt: skip
    entry = ShortEntry(
        id=new_id("short"), content="Chad said: absolute paths in configs, always",
        created_at=when, occurred_at=when,
    )  # fmt: skip
    v = embedder.embed([fact.content, entry.content])
    backend = open_backend(StorageSettings(), here)
    s = backend.open("s", False)
    s.apply_changes([ch.AddFact(fact, v[0]), ch.RestoreShort(entry, v[1], fact.id)], None)
    assert s.list_runs(10, 0) == []
    s.close()
    backend.close()

    out = cli("migrate", "--from", f"sqlite:{here}", "--to", f"sqlite:{there}", "--store", "s")
    assert "s: copied short 2, long 1, meta 1" in out, out
    backend = open_backend(StorageSettings(), there)
    copied = backend.open("s", False)
    assert copied.get_fact(fact.id) == fact
    assert copied.get_short(entry.id) == entry
    entries, intos, _ = copied.short_for_consolidation()
    assert dict(zip([e.id for e in entries], intos, strict=True))[entry.id] == fact.id
    copied.close()
    backend.close()
