"""The association graph: names as edges written with each memory, spreading activation.

Pure parts (the name extractor, the fan effect, the spreading steps) are
tested as functions; the rest runs the real service on real SQLite files
with the real embedding model, and the user-visible part over HTTP.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from halls import Memory, Settings
from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import Edge, NewShort
from halls.recall import spread
from halls.recall.entities import MENTIONS, mentions, names, node
from halls.recall.fusion import Signals
from http_helpers import created, search

T0 = 1_700_000_000.0
DAY = 86400.0

# One memory answers the query; a second shares only a rare name with it
# ("Biscuit"), no query word; two others match the query's words better
# than the second does, one of them only a little better.
ANSWER = "Caroline: My puppy Biscuit finally learned to sit today!"
LINKED = "Caroline: Yesterday Biscuit chewed through the garden hose again, what a mess."
OTHERS = [
    "Caroline: I read that a puppy should learn to sit before it is six months old.",
    "Caroline: Dogs at the park love to chase balls.",
]
QUERY = "What did Caroline's puppy learn to do?"


def _settings(data: Path, **recall: object) -> Settings:
    return Settings(data_dir=data, recall=RecallSettings(**recall))  # type: ignore[arg-type]


def _write(m: Memory, store: str = "g") -> dict[str, str]:
    texts = [ANSWER, LINKED, *OTHERS]
    items = [NewShort(content=t, occurred_at=T0 + n * 7 * DAY) for n, t in enumerate(texts)]
    return {e.content: e.id for e in m.remember_many(items, store=store)}


def _edge_rows(data: Path, store: str = "g") -> list[tuple[str, str, str]]:
    # closing(): a sqlite3 connection's own context manager commits, it does not close.
    with closing(sqlite3.connect(data / f"{store}.sqlite3")) as db:
        return [tuple(r) for r in db.execute("SELECT src, dst, kind FROM edges")]


# -- pure --


def test_names_reads_capitalised_runs_and_quoted_titles() -> None:
    """Runs of capitals past a sentence's first word, quoted titles; no label, date, or 'I'."""
    text = (
        'Melanie: Thanks Mel! I read "Charlotte\'s Web" in New York with Dr. Lee. '
        "Oliver came too, on Monday in July. The LGBTQ centre was open."
    )
    assert names(text) == ["charlotte web", "mel", "new york", "dr lee", "lgbtq"]
    assert names("I'm so happy! I think I'll go.") == []
    assert names("Oliver loves the park.") == []  # a sentence's first word says nothing


def test_mention_edges_hold_hashes_not_words() -> None:
    """A mention edge points at the name's hash node: no word of the memory is in it."""
    [edge] = mentions("s_1", "We met Zebulon at noon.", 5.0)
    assert edge == Edge("s_1", node("zebulon"), MENTIONS, 5.0)
    assert "zebulon" not in edge.dst.lower() and edge.dst.startswith("e_")
    assert node("zebulon") != node("zebulone")


def test_fan_effect_shares_less_the_more_a_node_links() -> None:
    """fan(n) = 1 - ln(n)/ln(fan_out+1): 1 for one link, falling, 0 past fan_out."""
    assert spread.fan(1, 20) == 1.0
    assert spread.fan(2, 20) == pytest.approx(0.7723, abs=1e-4)
    assert spread.fan(5, 20) < spread.fan(2, 20)
    assert spread.fan(20, 20) > 0.0
    assert spread.fan(21, 20) == 0.0


def test_a_hub_past_the_fan_out_passes_nothing() -> None:
    """Through a name shared by more than graph_fan_out memories nothing spreads; through
    a rarer one activation does, less the more it is shared, and never back to its source."""
    cfg = RecallSettings(graph_fan_out=3)
    out = [Edge("s_a", "e_rare", MENTIONS, 0.0), Edge("s_a", "e_common", MENTIONS, 0.0)]
    direct, hubs = spread.step_out({"s_a": 0.9}, out, cfg)
    assert direct == {} and hubs == {"e_rare": (0.9, "s_a"), "e_common": (0.9, "s_a")}
    back = [Edge(f"s_{i}", "e_common", MENTIONS, 0.0) for i in "abcd"]  # 4 > fan_out
    back += [Edge("s_a", "e_rare", MENTIONS, 0.0), Edge("s_b", "e_rare", MENTIONS, 0.0)]
    reached = spread.step_in(hubs, back, cfg)
    assert reached == {"s_b": pytest.approx(0.9 * spread.fan(2, 3))}


def test_direct_edges_share_by_the_seed_fan_and_bonus_only_scored_memories() -> None:
    """A direct (co_recall) edge passes fan(seed's degree); bonuses go to scored memories."""
    cfg = RecallSettings(graph_fan_out=20, graph_weight=0.5)
    edges = [Edge("s_a", "s_b", "co_recall", 0.0), Edge("s_a", "s_c", "co_recall", 0.0)]
    direct, hubs = spread.step_out({"s_a": 1.0}, edges, cfg)
    assert hubs == {} and direct == {"s_b": spread.fan(2, 20), "s_c": spread.fan(2, 20)}
    found = {"s_b": Signals(relevance=0.3)}
    assert spread.bonuses(found, direct, cfg) == {"s_b": pytest.approx(0.5 * spread.fan(2, 20))}


# -- the service, real SQLite and model --


def test_writes_store_mention_edges_and_edits_replace_them(memory: Memory) -> None:
    """remember writes an entry's names as edges in its transaction; a content edit
    replaces them; a delete removes them."""
    ids = _write(memory)
    s = memory._stores.open("g")
    biscuit = node("biscuit")
    linked = {e.src for e in s.edges([biscuit])}
    assert linked == {ids[ANSWER], ids[LINKED]}
    memory.edit_short(ids[LINKED], {"content": "Caroline: Then Pepper chewed the hose."}, store="g")
    assert {e.src for e in s.edges([biscuit])} == {ids[ANSWER]}
    assert [e.dst for e in s.edges([ids[LINKED]], [MENTIONS])] == [node("pepper")]
    memory.delete_short(ids[ANSWER], store="g")
    assert s.edges([biscuit]) == []


def test_activation_surfaces_a_linked_memory_plain_search_misses(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The memory sharing only a rare name with the best hit is out of the top 3 without
    the graph and in it with the graph, explained by score_detail['association'].

    Feedback is off in both: its second full-text query can reach a shared rare
    word too, and this test is about the graph alone."""
    data = tmp_path / "data"
    with Memory(_settings(data, graph_weight=0.0, feedback_weight=0.0), embedder=embedder) as m:
        ids = _write(m)
        plain = m.search(QUERY, store="g", n_results=3, reinforce=False)
    assert ids[ANSWER] in [h.id for h in plain]
    assert ids[LINKED] not in [h.id for h in plain]
    assert all(h.score_detail["association"] == 0 for h in plain)
    with Memory(_settings(data, feedback_weight=0.0), embedder=embedder) as m:
        hits = m.search(QUERY, store="g", n_results=3, reinforce=False)
    [seed_hit] = [h for h in hits if h.id == ids[ANSWER]]
    [got] = [h for h in hits if h.id == ids[LINKED]]
    seed = seed_hit.score_detail["relevance"] + seed_hit.score_detail["feedback"]
    want = 0.2 * seed * spread.fan(2, 20)  # graph_weight x seed x fan of a name in two
    assert got.score_detail["association"] == pytest.approx(want, abs=1e-4)


def test_a_name_in_more_memories_than_the_fan_out_links_nothing(
    tmp_path: Path, embedder: Embedder
) -> None:
    """With graph_fan_out below the name's degree the linked memory gains nothing."""
    data = tmp_path / "data"
    with Memory(_settings(data, graph_fan_out=1), embedder=embedder) as m:
        ids = _write(m)
        hits = m.search(QUERY, store="g", n_results=4, reinforce=False)
    detail = {h.id: h.score_detail["association"] for h in hits}
    assert detail[ids[LINKED]] == 0 and ids[LINKED] in detail


def test_co_recall_edges_only_when_listed(tmp_path: Path, embedder: Embedder) -> None:
    """A reinforced search links its top hits pairwise (co_recall) only when graph_edges
    lists co_recall; a search with reinforce off links nothing."""
    data = tmp_path / "data"
    with Memory(_settings(data, reinforce_top=2), embedder=embedder) as m:
        _write(m)
        m.search(QUERY, store="g")
    assert not [r for r in _edge_rows(data) if r[2] == "co_recall"]
    kinds = ["mentions", "co_recall"]
    with Memory(_settings(data, reinforce_top=2, graph_edges=kinds), embedder=embedder) as m:
        m.search("garden hose", store="g", reinforce=False)
        top = [h.id for h in m.search(QUERY, store="g", n_results=2)]
    assert [r for r in _edge_rows(data) if r[2] == "co_recall"] == [(*sorted(top), "co_recall")]


def test_purge_leaves_no_edge_of_the_record_and_no_words_in_edges(memory: Memory) -> None:
    """forget-about purges an entry and its edges; no edge row ever holds a memory's words."""
    data = memory.settings.data_dir
    keep = memory.remember("Met Zebulon Quark and Biscuit at the fair.", store="g")
    gone = memory.remember("Zebulon Quark's passport number is X1234567.", store="g")
    rows = _edge_rows(data)
    assert {r[0] for r in rows} == {keep.id, gone.id}
    assert all("zebulon" not in " ".join(r).lower() for r in rows)
    memory.forget_about(store="g", subject="X1234567", dry_run=False)
    rows = _edge_rows(data)
    assert rows and all(gone.id not in r for r in rows)
    assert {r[0] for r in rows} == {keep.id}


def test_consolidation_links_new_facts_and_revert_unlinks_them(memory: Memory) -> None:
    """A promoted fact gets mention edges in its run; reverting the run removes them."""
    memory.remember("Priya Raman leads the Falcon project.", store="g", pinned=True)
    run = memory.consolidate(store="g")
    [fid] = [a.target_id for a in run.actions if a.kind == "promote"]
    s = memory._stores.open("g")
    assert {e.dst for e in s.edges([fid], [MENTIONS])} >= {node("falcon")}
    memory.revert_run(run.id, store="g")
    assert s.edges([fid], [MENTIONS]) == []


# -- over HTTP --


def test_search_over_http_explains_the_association(server) -> None:  # type: ignore[no-untyped-def]
    """POST /search explains the linked memory's bonus in score_detail.association."""
    c = server.client()
    linked = None
    for n, text in enumerate([ANSWER, LINKED, *OTHERS]):
        body = {"content": text, "occurred_at": T0 + n * 7 * DAY}
        got = created(c, "/short", "h", body)
        linked = got["id"] if text == LINKED else linked
    hits = search(c, "h", query=QUERY, n_results=4, reinforce=False)
    assert ANSWER in [h["content"] for h in hits]
    gained = {h["id"] for h in hits if h["score_detail"]["association"] > 0}
    assert gained == {linked}


def test_a_store_written_before_the_graph_is_linked_when_first_used(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Entries stored without edges (an older store) get their mention edges, stamped
    with their creation, the first time the service opens the store; once."""
    from halls.embed import fingerprint
    from halls.models import ShortEntry, new_id
    from halls.service.graph import NAMES_KEY
    from halls.store import open_backend

    data = tmp_path / "data"
    settings = _settings(data)
    raw = open_backend(settings.storage, data).open("old", True)
    texts = [ANSWER, LINKED]
    rows = [
        ShortEntry(id=new_id("short"), content=t, created_at=T0 + n, occurred_at=T0 + n)
        for n, t in enumerate(texts)
    ]
    raw.add_short(rows, embedder.embed(texts))
    raw.set_meta("embedder", fingerprint(embedder))
    raw.close()
    assert _edge_rows(data, "old") == []
    with Memory(settings, embedder=embedder) as m:
        m.search(QUERY, store="old", reinforce=False)
        s = m._stores.open("old")
        assert s.edges([node("biscuit")]) == [
            Edge(rows[0].id, node("biscuit"), MENTIONS, T0),
            Edge(rows[1].id, node("biscuit"), MENTIONS, T0 + 1),
        ]
        assert s.get_meta(NAMES_KEY) is not None
