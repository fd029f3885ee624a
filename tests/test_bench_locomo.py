"""The LoCoMo recall benchmark: its scoring, its data handling, and one live run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from halls.bench import foreign, locomo

# A small conversation in LoCoMo's format, written for these tests (with the
# real data's defects: joined and malformed evidence ids, category 5, a
# question without evidence). The real split is a benchmark input
# (`halls bench locomo --data FILE`), never a test dependency.
DATA = Path(__file__).resolve().parent / "data" / "locomo_mini.json"


def _data() -> Path:
    return DATA


def test_perfect_ranking_scores_one() -> None:
    """Evidence ranked first scores 1.0 on every recall@k and on nDCG@10."""
    ranked = ["D1:2", "D3:4"] + [f"D9:{i}" for i in range(1, 30)]
    scores = locomo.score_ranking(ranked, ["D3:4", "D1:2"])
    # Two evidence turns cannot both fit in the top 1.
    assert scores == {
        "recall@1": 0.5,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "recall@20": 1.0,
        "ndcg@10": 1.0,
    }
    single = locomo.score_ranking(["D1:2", "D5:5"], ["D1:2"])
    assert all(v == 1.0 for v in single.values())


def test_reversed_ranking_scores_low() -> None:
    """The same list reversed puts the evidence last: zero at every k <= 20."""
    perfect = ["D1:1", "D1:2"] + [f"D2:{i}" for i in range(1, 40)]
    scores = locomo.score_ranking(list(reversed(perfect)), ["D1:1", "D1:2"])
    assert all(v == 0.0 for v in scores.values())


def test_partial_evidence_scores_the_share_found() -> None:
    """Two of three evidence turns in the top 5 and the third at 12 -> 2/3, then 1."""
    ranked = ["D1:1", "X:1", "D1:2", "X:2", "X:3", *[f"X:{i}" for i in range(4, 10)], "D1:3"]
    scores = locomo.score_ranking(ranked, ["D1:1", "D1:2", "D1:3"])
    assert scores["recall@1"] == pytest.approx(1 / 3)
    assert scores["recall@5"] == pytest.approx(2 / 3)
    assert scores["recall@10"] == pytest.approx(2 / 3)
    assert scores["recall@20"] == 1.0
    assert 0 < scores["ndcg@10"] < 1


def test_duplicate_hits_count_once() -> None:
    """A turn returned twice cannot fill two evidence slots."""
    scores = locomo.score_ranking(["D1:1", "D1:1", "D1:2"], ["D1:1", "D1:2"])
    assert scores["recall@1"] == 0.5
    assert scores["recall@5"] == 1.0


def _hit(id: str, dia: str | None, sources: tuple[str, ...] = ()) -> dict[str, object]:
    meta = {"dia_id": dia} if dia else {}
    return {
        "id": id,
        "metadata": meta,
        "sources": [{"id": f"s{d}", "metadata": {"dia_id": d}} for d in sources],
    }


def test_a_facts_sources_follow_it_or_take_its_place() -> None:
    """A fact keeps its own place (its id) with its sources' turns right after it, or,
    ``fact=False``, they take its place; a fact without sources is its id."""
    hits = [_hit("s_1", "D1:1"), _hit("l_1", None, ("D2:2", "D1:1")), _hit("l_2", None)]
    assert locomo.with_sources(hits) == ["D1:1", "l_1", "D2:2", "D1:1", "l_2"]
    assert locomo.with_sources(hits, fact=False) == ["D1:1", "D2:2", "D1:1", "l_2"]
    # Merged, the second source pushes the turn after the fact out of the top 2.
    merged = locomo.score_ranking(locomo.with_sources(hits), ["D2:2"])
    assert merged["recall@1"] == 0.0 and merged["recall@5"] == 1.0


def test_covered_counts_the_top_k_hits_sources_beside_them() -> None:
    """The top k hits cover their own turns and their sources': k hits, more turns."""
    hits = [_hit("l_1", None, ("D2:2", "D3:3")), _hit("s_1", "D1:1")]
    scores = locomo.score_covered(hits, ["D3:3", "D1:1"])
    assert scores["recall@1"] == 0.5 and scores["recall@5"] == 1.0


def test_aggregate_means_per_category_and_overall() -> None:
    """Per-category means and the overall mean over every question, with counts."""
    rows = [(1, {"recall@5": 1.0}), (1, {"recall@5": 0.0}), (4, {"recall@5": 1.0})]
    agg = locomo.aggregate(rows)
    assert agg["multi-hop"] == {"n": 2, "recall@5": 0.5}
    assert agg["single-hop"] == {"n": 1, "recall@5": 1.0}
    assert agg["overall"]["n"] == 3
    assert agg["overall"]["recall@5"] == pytest.approx(0.6667)
    assert "temporal" not in agg


def test_evidence_defects_are_normalised_and_counted() -> None:
    """Joined ids are split, 'D:11:26' and 'D30:05' read as meant, unknown ids skipped."""
    known = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:3", "D1:5"}
    ids, skipped = locomo.normalise_evidence(
        ["D8:6; D9:17", "D:11:26", "D30:05", "D1:3 D1:5", "D", "D99:1", "D8:6"], known
    )
    assert ids == ["D8:6", "D9:17", "D11:26", "D30:5", "D1:3", "D1:5"]
    assert skipped == 2


def test_session_time_is_parsed_as_utc_iso() -> None:
    """'2:14 pm on 9 May, 2023' becomes 14:14 UTC on that day; nonsense is refused."""
    assert locomo.session_time("2:14 pm on 9 May, 2023") == "2023-05-09T14:14:00+00:00"
    assert locomo.session_time("12:09 am on 1 January, 2024") == "2024-01-01T00:09:00+00:00"
    with pytest.raises(locomo.InvalidInput):
        locomo.session_time("yesterday")


def test_loading_accounts_for_every_question() -> None:
    """Every question of the file is asked or counted as skipped, for a stated reason."""
    raw = json.loads(_data().read_text())
    conversations = locomo.load(_data())
    assert [c.sample_id for c in conversations] == [s["sample_id"] for s in raw]
    for sample, conv in zip(raw, conversations, strict=True):
        skipped = conv.skipped["category_5"] + conv.skipped["no_evidence"]
        assert len(conv.questions) + skipped == len(sample["qa"])
        turns = [t for s in conv.sessions for t in s]
        assert len({t.dia_id for t in turns}) == len(turns)
        known = {t.dia_id for t in turns}
        assert all(set(q.evidence) <= known for q in conv.questions)
    first = conversations[0].sessions[0][0]
    assert first.text.startswith(raw[0]["conversation"]["session_1"][0]["speaker"] + ": ")
    captioned = [
        t
        for s in raw[0]["conversation"].values()
        if isinstance(s, list)
        for t in s
        if t.get("blip_caption")
    ]
    assert captioned, "the first conversation shares pictures"
    texts = {t.text for s in conversations[0].sessions for t in s}
    assert locomo.turn_text(captioned[0]) in texts
    assert " [image: " in locomo.turn_text(captioned[0])
    # The defects written into the file are each read as meant or counted.
    assert conversations[0].skipped == {"evidence_ids": 1, "no_evidence": 2, "category_5": 1}
    evidence = [q.evidence for q in conversations[0].questions]
    assert ("D2:4", "D2:6") in evidence and ("D2:3", "D3:4") in evidence
    assert ("D3:1",) in evidence and ("D2:1",) in evidence


def test_one_conversation_end_to_end_over_http(server) -> None:
    """One conversation through a live server: every turn stored, scores consistent."""
    conv = locomo.load(_data())[0]
    conv.sample_id = f"{conv.sample_id}-e2e-{id(conv)}"
    result = locomo.run(server.url, [conv], retriever="full", limit_questions=6)
    turns = sum(len(s) for s in conv.sessions)
    assert result["turns"] == turns and result["questions"] == 6
    assert result["reinforce"] is True  # asked as an agent asks, by default
    stats = server.client().get("/stats", params={"store": locomo.STORE_PREFIX + conv.sample_id})
    assert stats.json()["counts"]["short"] == turns
    overall = result["scores"]["overall"]
    assert overall["n"] == 6
    for q in result["per_question"]:
        assert q["top"], "every question gets hits"
        assert set(q["top"]) <= {t.dia_id for s in conv.sessions for t in s}
        found = len(set(q["evidence"]) & set(q["top"])) / len(q["evidence"])
        assert q["recall@10"] == pytest.approx(found)
        assert q["recall@1"] <= q["recall@5"] <= q["recall@10"] <= q["recall@20"]
    assert overall["recall@10"] == pytest.approx(
        sum(q["recall@10"] for q in result["per_question"]) / 6, abs=1e-4
    )
    assert result["search_latency"]["p50_ms"] > 0
    assert result["ingest"]["turns_per_second"] > 0


def test_consolidate_runs_once_per_store_and_scores_sources_beside_hits(server) -> None:
    """--consolidate: one run per store before its questions, the facts it promoted
    counted; covered recall (sources beside their hits) never falls below the hits'."""
    conv = locomo.load(_data())[0]
    conv.sample_id = f"{conv.sample_id}-consolidate-{id(conv)}"
    result = locomo.run(server.url, [conv], consolidate=True)
    store = {"store": locomo.STORE_PREFIX + conv.sample_id}
    with server.client() as http:
        runs = http.get("/consolidate/runs", params=store).json()["runs"]
        facts = http.get("/long", params={**store, "limit": 1000}).json()
    assert len(runs) == 1 and result["consolidate"]["promoted"] == len(facts)
    assert result["consolidate"]["seconds"] > 0
    for name, scores in result["scores"].items():
        covered = result["scores_covered"][name]
        assert all(covered[f"recall@{k}"] >= scores[f"recall@{k}"] for k in locomo.KS)
        assert result["scores_with_sources"][name]["n"] == scores["n"]


def test_cli_refuses_a_missing_data_file(tmp_path: Path) -> None:
    """`halls bench locomo --data nowhere.json` fails in one line, without a server."""
    run = subprocess.run(
        [sys.executable, "-m", "halls", "bench", "locomo", "--data", str(tmp_path / "no.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert "no LoCoMo data" in run.stderr
    assert "Traceback" not in run.stderr


def test_foreign_questions_are_asked_of_every_other_store(server) -> None:
    """--foreign: each store gets the other conversations' and the general-knowledge questions."""
    conversations = locomo.load(_data())
    for conv in conversations:
        conv.sample_id = f"{conv.sample_id}-foreign-{id(conv)}"
    result = locomo.run(server.url, conversations, foreign=True)
    general = foreign.general_questions()
    assert len(general) == len(set(general)) == 50
    asked = result["foreign_questions"]
    own = [len(c.questions) for c in conversations]
    summary = result["foreign"]
    assert summary["foreign"]["n"] == own[1] + own[0]  # each store, the other's questions
    assert summary["general"]["n"] == 50 * len(conversations)
    for q in asked:
        # A foreign question is never asked of its own conversation's store.
        assert q["kind"] == "general" or q["source"] != q["conversation"]
        assert len(q["hits"]) <= foreign.N_RESULTS
    # The share is that of questions none of whose hits clears the threshold.
    t = result["min_relevance"]
    silent = [q for q in asked if q["kind"] == "general" and all(h[-1] < t for h in q["hits"])]
    assert summary["general"]["no_hit"] == round(len(silent) / summary["general"]["n"], 4)
    # Questions about cooking or the Qin dynasty: a store of two friends' chat knows nothing.
    assert summary["general"]["no_hit"] >= 0.8
    kept, every = result["scores_at_min_relevance"]["overall"], result["scores"]["overall"]
    assert kept["recall@10"] <= every["recall@10"]
    assert locomo.table_rows(result)[-1][0] == f"overall >= {t:g}"


def test_no_hit_share_counts_a_search_the_model_cannot_judge_as_answered() -> None:
    rows = [{"hits": [[0.5, 2.0, 0.5, 2.0, 0.05]]}, {"hits": [[0.5, 2.0, 0.5, 2.0, None]]}]
    assert foreign.no_hit_share(rows, 0.1) == 0.5
    assert foreign.no_hit_share(rows, 0.0) == 0.0
    assert foreign.no_hit_share([], 0.1) == 0.0
