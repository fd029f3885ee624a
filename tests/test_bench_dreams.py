"""``halls bench dreams`` from the command line, against a live server over HTTP."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from click.testing import CliRunner

from halls.bench.dreams import KINDS, load
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


def test_the_shipped_scenario_files_load() -> None:
    """The team's suite and the two other files of the package parse, every kind in
    the suite, ids unique across files."""
    data = resources.files("halls.bench").joinpath("data")
    files = {"dreams.yaml": 94, "dreams_fresh.yaml": 11, "dreams_blind.yaml": 1408}
    ids: list[str] = []
    for name, count in files.items():
        with resources.as_file(data.joinpath(name)) as path:
            scenarios = load(path)
        assert len(scenarios) == count, name
        ids += [s.id for s in scenarios]
    assert {s.kind for s in load()} == set(KINDS)
    assert len(ids) == len(set(ids))
