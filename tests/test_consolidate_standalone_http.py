"""Facts that stand on their own, end to end: real SQLite, the real models, through HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from test_consolidate_http import DAY, PATHS, S, clock, facts, make_server, remember, run

__all__ = ["clock", "make_server"]  # fixtures, imported for pytest


def test_yesterday_is_stored_as_the_date_it_meant(make_server, clock) -> None:
    """A pinned note said "yesterday": the fact names the day before it was said."""
    c = make_server().client
    said = datetime.fromtimestamp(clock(), UTC) - timedelta(days=2)
    remember(
        c,
        "Chad went to the dentist yesterday",
        occurred_at=said.isoformat(),
        pinned=True,
    )
    record = run(c)
    assert record["counts"]["promote"] == 1
    [fact] = facts(c)
    day = said - timedelta(days=1)
    assert fact["content"] == f"Chad went to the dentist on {day.day} {day:%B} {day.year}"
    assert "yesterday" not in c.get("/long", params={**S, "limit": 10}).text


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
