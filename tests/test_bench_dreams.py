"""``halls bench dreams`` from the command line, against a live server over HTTP."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from halls.bench.dreams import (
    KINDS,
    Outcome,
    check,
    load,
    parse,
    retractions_as_evidence,
    summarise,
    wrong_retirements,
)
from halls.cli import main
from test_bench_dreams_locomo import _conversation

# Written for this test; not the team's suite.
SCENARIOS = """
- id: cli-restated
  kind: paraphrase
  phases:
    - short:
        - "-3 a: Wilma grows tomatoes on her balcony"
        - "-1 a: Wilma grows tomatoes on her balcony"
  expect: {active: [a]}
- id: cli-once
  kind: one-off
  phases:
    - short:
        - "-1 a: The printer on floor two jammed this morning"
  expect: {inactive: [a]}
"""


def test_scenarios_are_scored_per_kind(server, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIOS)
    out = tmp_path / "r.json"
    got = CliRunner().invoke(
        main,
        ["bench", "dreams", "--url", server.url, "--scenarios", str(path), "--out", str(out)],
    )
    assert got.exit_code == 0, got.output
    result = json.loads(out.read_text())
    assert result["scenarios"] == 2 and result["passed"] == 2, result["failures"]
    assert result["kinds"]["paraphrase"] == {"n": 1, "passed": 1, "pass_rate": 1.0}
    assert "2/2 passed" in got.output
    assert result["planted"] == {
        "active": {"n": 1, "as_expected": 1},
        "inactive": {"n": 1, "as_expected": 1},
        "unexpected_facts": 0,
        "wrong_retirements": 0,
        "retractions_as_evidence": 0,
    }
    assert "planted facts: 1 of 1 active as expected, 1 of 1 changed" in got.output
    only = CliRunner().invoke(
        main,
        ["bench", "dreams", "--url", server.url, "--scenarios", str(path), "--kind", "one-off"],
    )
    assert only.exit_code == 0 and "1/1 passed" in only.output, only.output


def test_bad_kinds_and_mixed_modes_are_refused(tmp_path: Path) -> None:
    got = CliRunner().invoke(main, ["bench", "dreams", "--kind", "nonsense", "--url", "http://x"])
    assert got.exit_code == 2 and "unknown kind(s) nonsense" in got.output
    got = CliRunner().invoke(
        main, ["bench", "dreams", "--locomo", str(tmp_path / "x.json"), "--kind", "update"]
    )
    assert got.exit_code == 2 and "--locomo scores conversations" in got.output


def test_locomo_mode_and_its_old_name(server, tmp_path: Path) -> None:
    """``--locomo FILE`` scores promoted facts by LoCoMo's observations; ``dreams-locomo`` too."""
    for n, args in enumerate(
        (["dreams", "--locomo"], ["dreams-locomo", "--data"]),
    ):
        sample = _conversation()
        sample["sample_id"] = f"cli-{n}-{tmp_path.name}"
        path = tmp_path / f"locomo{n}.json"
        path.write_text(json.dumps([sample]))
        out = tmp_path / f"r{n}.json"
        got = CliRunner().invoke(
            main, ["bench", *args, str(path), "--url", server.url, "--out", str(out)]
        )
        assert got.exit_code == 0, got.output
        (conv,) = json.loads(out.read_text())["per_conversation"]
        assert conv["turns"] == 12 and conv["precision"] == 1.0
        assert "halls bench dreams --locomo: 12 turns" in got.output


def _locomo_file(tmp_path: Path, name: str) -> Path:
    """The made-up conversation, with one observation no fact says."""
    sample = _conversation()
    sample["sample_id"] = f"{name}-{tmp_path.name}"
    sample["observation"]["session_3_observation"]["Ben"] = [["Ben builds furniture.", "D3:3"]]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps([sample]))
    return path


@pytest.mark.torch
def test_locomo_mode_reports_content_figures(server, tmp_path: Path) -> None:
    """The one fact says an observation: content precision 1, coverage 3 of 4, encoder named."""
    out = tmp_path / "r.json"
    path = _locomo_file(tmp_path, "content")
    got = CliRunner().invoke(
        main, ["bench", "dreams", "--locomo", str(path), "--url", server.url, "--out", str(out)]
    )
    assert got.exit_code == 0, got.output
    result = json.loads(out.read_text())
    figures = result["content"]
    assert figures["encoder"] == {
        "library": "sentence-transformers",
        "model": "all-MiniLM-L6-v2",
        "dtype": "float32",
        "threshold": 0.8,
    }
    assert (figures["facts"], figures["good"], figures["precision"]) == (1, 1, 1.0)
    assert figures["good_per_conversation"] == 1.0
    assert (figures["observations"], figures["covered"], figures["coverage"]) == (4, 3, 0.75)
    (conv,) = result["per_conversation"]
    assert conv["content"] == {
        "good": 1,
        "precision": 1.0,
        "observations": 4,
        "covered": 3,
        "coverage": 0.75,
    }
    (fact,) = conv["promoted"]
    assert fact["good"] is True and fact["cosine"] >= 0.9
    assert "precision 1.000 (1 of 1)" in got.output and "0.750" in got.output
    assert "sentence-transformers all-MiniLM-L6-v2 float32, cosine >= 0.80" in got.output


def test_locomo_mode_without_the_torch_extra(server, tmp_path: Path, monkeypatch) -> None:
    """No sentence-transformers: the provenance figures, and a plain word on the extra."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    out = tmp_path / "r.json"
    path = _locomo_file(tmp_path, "no-torch")
    got = CliRunner().invoke(
        main, ["bench", "dreams", "--locomo", str(path), "--url", server.url, "--out", str(out)]
    )
    assert got.exit_code == 0, got.output
    assert "Traceback" not in got.output
    assert "need sentence-transformers: pip install 'halls[torch]'" in got.output
    result = json.loads(out.read_text())
    assert result["overall"]["precision"] == 1.0
    assert result["content"]["skipped"].endswith("pip install 'halls[torch]'")
    assert "content" not in result["per_conversation"][0]


def test_the_shipped_scenario_files_load() -> None:
    """The team's suite and the other files of the package parse, every kind in
    the suite, ids unique across files."""
    data = resources.files("halls.bench").joinpath("data")
    files = {
        "dreams.yaml": 94,
        "dreams_fresh.yaml": 11,
        "dreams_blind.yaml": 1408,
        "dreams_blind2.yaml": 100,
        "dreams_blind3a.yaml": 30,
        "dreams_blind3b.yaml": 30,
        "dreams_blind4.yaml": 30,
    }
    ids: list[str] = []
    for name, count in files.items():
        with resources.as_file(data.joinpath(name)) as path:
            scenarios = load(path)
        assert len(scenarios) == count, name
        ids += [s.id for s in scenarios]
    assert {s.kind for s in load()} == set(KINDS)
    assert len(ids) == len(set(ids))


def test_planted_facts_are_counted_one_by_one() -> None:
    """A scenario with two planted facts, one lost, and a changed one still active,
    fails whole; the planted figures say what the user lost: one of two, and one
    old value left standing."""
    (scenario,) = parse(
        [
            {
                "id": "two",
                "kind": "update",
                "phases": [{"short": ["-3 a: A", "-3 b: B", "-3 c: C", "-1 d: D"]}],
                "expect": {"active": ["a", "b", "d"], "inactive": ["c"]},
            }
        ]
    )
    ids = {"a": ["s_a"], "b": ["s_b"], "c": ["s_c"], "d": ["s_d"]}
    facts = [
        {"id": "l_1", "content": "A", "derived_from": ["s_a"]},
        {"id": "l_2", "content": "C", "derived_from": ["s_c"]},
        {"id": "l_3", "content": "D", "derived_from": ["s_d"]},
        {"id": "l_4", "content": "E", "derived_from": ["s_x"]},
    ]
    missed: set[str] = set()
    problems = check(scenario, ids, facts, missed)
    assert missed == {"b", "c"}
    # The old value still active is also a fact no tag explains.
    assert [p.split(":")[0] for p in problems] == [
        "'b'",
        "'c'",
        "unexpected active fact l_2",
        "unexpected active fact l_4",
    ]
    result = summarise([Outcome(scenario, False, problems, facts, [], "heuristic", missed)], "h", 1)
    assert result["planted"] == {
        "active": {"n": 3, "as_expected": 2},
        "inactive": {"n": 1, "as_expected": 0},
        "unexpected_facts": 2,
        "wrong_retirements": 0,
        "retractions_as_evidence": 0,
    }


def test_wrong_retirements_are_those_of_held_facts_by_other_statements() -> None:
    """A held fact superseded by a statement of another planted fact, or retracted
    with nothing retracting it, is a wrong retirement; a changed fact superseded,
    or a held fact superseded by its own restatement, is not."""
    (scenario,) = parse(
        [
            {
                "id": "r",
                "kind": "update",
                "phases": [{"short": ["-3 a: A", "-3 b: B", "-3 c: C", "-1 d: D", "-1 e: E"]}],
                "expect": {"active": ["a", "b", "d", "e"], "inactive": ["c"]},
            }
        ]
    )
    ids = {t: [f"s_{t}", f"j_{t}"] for t in "abcde"}
    active = [
        {"id": "l_d", "content": "D", "derived_from": ["s_d"]},
        {"id": "l_b2", "content": "B again", "derived_from": ["s_b", "j_b"]},
        {"id": "l_e", "content": "E", "derived_from": ["s_e"]},
    ]
    retired = [
        # c changed to d: as planted.
        {"id": "l_c", "content": "C", "derived_from": ["j_c"], "superseded_by": "l_d"},
        # b restated, read as a change of itself: the fact still holds.
        {"id": "l_b", "content": "B", "derived_from": ["s_b"], "superseded_by": "l_b2"},
        # a superseded by e, another planted fact: wrong.
        {
            "id": "l_a",
            "content": "Raj is in Bangalore",
            "derived_from": ["s_a"],
            "superseded_by": "l_e",
        },
        # a retracted by nothing: wrong.
        {"id": "l_a2", "content": "A too", "derived_from": ["j_a"], "superseded_by": None},
    ]
    every = {f["id"]: f for f in [*active, *retired]}
    got = wrong_retirements(scenario, ids, retired, every)
    assert got == ["'Raj is in Bangalore' (a) retired by 'E'", "'A too' (a) retired (retracted)"]
    outcome = Outcome(scenario, True, [], active, [], "local", set(), got)
    result = summarise([outcome], "local", 1)
    assert result["planted"]["wrong_retirements"] == 2
    assert result["wrong_retirements"] == {"r": got}


def test_a_retraction_that_made_or_confirmed_a_given_up_fact_is_counted() -> None:
    """Issue 51's climbing gym: "I cancelled my membership" among the sources that
    promoted (or confirmed) "I'm a member at the climbing gym" is counted; the same
    statement retiring the fact (an ``obsolete`` action, whose sources are its
    record) is not, nor is a change that is kept (an ``active`` tag)."""
    (scenario,) = parse(
        [
            {
                "id": "gym",
                "kind": "retraction",
                "phases": [{"short": ["-3 a: member", "-2 b: sister", "-1 r: cancelled"]}],
                "expect": {"active": ["b"], "inactive": ["a"], "optional": ["r"]},
            }
        ]
    )
    ids = {"a": ["s_a"], "b": ["s_b"], "r": ["s_r"]}
    every = {
        "l_a": {"id": "l_a", "content": "member", "derived_from": ["s_a", "s_r"]},
        "l_b": {"id": "l_b", "content": "sister", "derived_from": ["s_b", "s_a"]},
    }
    made = [
        {"kind": "promote", "target_id": "l_a", "inputs": ["s_a", "s_r"]},
        {"kind": "confirm", "target_id": "l_a", "inputs": ["s_r"]},
        {"kind": "obsolete", "target_id": "l_a", "inputs": ["s_r"]},
        {"kind": "confirm", "target_id": "l_b", "inputs": ["s_b"]},
    ]
    got = retractions_as_evidence(scenario, ids, made, every)
    assert got == ["promote 'member' (r for a)", "confirm 'member' (r for a)"]
    outcome = Outcome(scenario, True, [], [], [], "local", set(), [], got)
    result = summarise([outcome], "local", 1)
    assert result["planted"]["retractions_as_evidence"] == 2
    assert result["retractions_as_evidence"] == {"gym": got}
