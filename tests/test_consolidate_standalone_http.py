"""Facts that stand on their own, end to end: real SQLite, the real models, through HTTP."""

from __future__ import annotations

from test_consolidate_http import DAY, PATHS, clock, facts, make_server, remember, run

__all__ = ["clock", "make_server"]  # fixtures, imported for pytest


def test_a_statement_pointing_outside_itself_is_not_promoted(make_server, clock) -> None:
    """Said on three days, "Chad tried to apologize to them" has the evidence but no fact
    comes of it; the self-contained paraphrases beside it become one."""
    c = make_server().client
    for text in PATHS:
        remember(c, text)
        remember(c, "Chad tried to apologize to them")
        clock.advance(DAY)
    record = run(c)
    assert record["counts"]["promote"] == 1
    [fact] = facts(c)
    assert fact["content"] in PATHS
    assert any("point at what they do not name" in n for n in record["notes"])
