"""``halls bench context``: the terse notation against the verbose one on the scripted session.

No figure is pinned: the benchmark must render the same facts in both
notations, check each fact's content, and report a saving and the hot set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halls.bench.context import keeps_content, key_terms
from halls.cli import main
from halls.service.notation import PHRASES, terse_text


def test_content_check_catches_a_lost_value() -> None:
    """A terse line missing a name, a number or any word but articles fails the check."""
    verbose = "The staging database of Acme runs PostgreSQL 16 on port 5433."
    assert key_terms(verbose) == {"acme", "postgresql", "16", "5433"}
    assert keeps_content(verbose, terse_text(verbose), PHRASES) == (True, True)
    assert keeps_content(verbose, "staging database of Acme runs PostgreSQL on port 5433", {}) == (
        False,
        False,
    )
    assert keeps_content(verbose, "database of Acme runs PostgreSQL 16 on port 5433", {}) == (
        True,
        False,
    )


@pytest.mark.slow
def test_bench_context_reports_both_notations(tmp_path: Path) -> None:
    """The scripted session's facts, the same in both blocks, every fact's content kept, terse
    smaller under every counter, and the hot set within its budget."""
    out = tmp_path / "context.json"
    got = CliRunner().invoke(main, ["bench", "context", "--out", str(out)])
    assert got.exit_code == 0, got.output
    figures = json.loads(out.read_text())
    n = figures["facts"]
    assert n >= 20 and figures["same_facts"] is True
    assert figures["key_terms_kept"] == figures["words_kept"] == n
    for name, (verbose, terse) in figures["tokens"].items():
        assert 0 < terse < verbose, name
        assert f"{name:<28}{verbose:>9}{terse:>9}" in got.output
    hot = figures["hot"]
    assert hot["active_facts"] == n
    for fmt in ("verbose", "terse"):
        assert 0 < hot[fmt]["tokens"] <= hot["budget_tokens"] < hot[fmt]["demand_tokens"]
