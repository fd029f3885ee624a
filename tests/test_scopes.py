"""The rules of work scopes (``halls.scopes``, pure), and the session block's cooling."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from halls.config import RecallSettings
from halls.errors import InvalidInput
from halls.models import Hit, LongFact, Scope
from halls.scopes import check_scope, common_scope, is_cold, mark_done, take_turn
from halls.service.session import cool, rank_facts

NOW = 1_700_000_000.0


def play(turns: list[list[str]], idle: int = 6, switch: int = 3) -> dict[str, Scope]:
    """Run ``turns`` (the scopes each writes for) from an empty store; the scopes after."""
    turn, scopes = 0, {}
    for n, written in enumerate(turns):
        present = {k: v for k, v in scopes.items() if v.status == "open" or k in written}
        turn, changed = take_turn(turn, present, written, NOW + n, idle, switch)
        scopes |= {s.name: s for s in changed}
    return scopes


def test_a_scope_opens_on_its_first_write_and_counts_its_turns() -> None:
    """Opened on the first turn naming it; each later one counts; one batch is one turn."""
    s = play([["a"], ["a", "a"], []])["a"]
    assert (s.status, s.turns, s.last_turn, s.elsewhere) == ("open", 2, 2, 0)


def test_three_turns_for_other_scopes_close_it_as_switched() -> None:
    """Two turns elsewhere keep it open; a turn naming no scope is no switch; the third closes."""
    scopes = play([["a"], ["b"], [], ["b"]])
    assert scopes["a"].status == "open" and scopes["a"].elsewhere == 2
    a = play([["a"], ["b"], [], ["b"], ["c"]])["a"]
    assert (a.status, a.closed_because, a.elsewhere) == ("closed", "switched", 3)
    assert a.closed_at == datetime.fromtimestamp(NOW + 4, tz=UTC)
    # Writing for it again resets the count.
    assert play([["a"], ["b"], ["b"], ["a"], ["b"], ["b"]])["a"].status == "open"


def test_six_turns_without_it_close_it_as_idle() -> None:
    """Five turns later it is open; the sixth closes it; the settings change both counts."""
    assert play([["a"]] + [[]] * 5)["a"].status == "open"
    a = play([["a"]] + [[]] * 6)["a"]
    assert (a.status, a.closed_because, a.last_turn) == ("closed", "idle", 1)
    assert play([["a"], []], idle=1)["a"].closed_because == "idle"
    assert play([["a"], ["b"]], switch=1)["a"].closed_because == "switched"


def test_a_closed_scope_reopens_on_a_write_and_done_marks_it() -> None:
    """A write for a closed scope opens it again; mark_done closes an open one now and
    marks a closed one done."""
    a = play([["a"]] + [[]] * 6 + [["a"]])["a"]
    assert (a.status, a.closed_because, a.closed_at, a.turns) == ("open", None, None, 2)
    done = mark_done(a, NOW + 100)
    assert done.status == "closed" and done.closed_because == "done"
    idle = play([["a"]] + [[]] * 6)["a"]
    assert mark_done(idle, NOW + 100).closed_at == idle.closed_at
    assert mark_done(idle, NOW + 100).closed_because == "done"


@pytest.mark.parametrize("name", ["web/fix-login", "a", "PROJ-12:step#3", "x" * 128, None])
def test_check_scope_takes_names_and_none(name: str | None) -> None:
    assert check_scope(name) == name


@pytest.mark.parametrize("bad", ["", "-a", "/a", "a b", "a\n", "x" * 129, "naïve", 5, ["a"]])
def test_check_scope_refuses_the_rest(bad: object) -> None:
    with pytest.raises(InvalidInput, match="scope must be"):
        check_scope(bad)


def test_common_scope_and_cold() -> None:
    """The most named scope (first of a tie) or None; cold is a named scope not open."""
    assert common_scope([None, "b", "a", "a"]) == "a"
    assert common_scope(["b", "a"]) == "b" and common_scope([None]) is None
    assert is_cold("a", {"b"}) and not is_cold("a", {"a"}) and not is_cold(None, set())


def _fact(content: str, scope: str | None, id: str) -> LongFact:
    at = datetime.fromtimestamp(NOW, tz=UTC)
    return LongFact(
        id=id, content=content, scope=scope, first_seen=at,
        last_confirmed=at, created_at=at, occurred_at=at,
    )  # fmt: skip


def _hit(id: str, scope: str | None) -> Hit:
    at = datetime.fromtimestamp(NOW, tz=UTC)
    return Hit(
        id=id, tier="short", content=id, topic=None, metadata={}, occurred_at=at, created_at=at,
        score=1.0, relevance=1.0, score_detail={}, scope=scope,
    )  # fmt: skip


def test_cool_drops_closed_scopes_and_puts_the_sessions_first() -> None:
    """Facts of scopes not open are dropped; hits too, unless asked for (then last); the
    session's scope goes first among hits and facts."""
    facts = [_fact("A", "a", "l_2"), _fact("B", "b", "l_3"), _fact("C", None, "l_1")]
    hits = [_hit("h1", "b"), _hit("h2", None), _hit("h3", "a")]
    kept, _, shown = cool(facts, [], hits, {"a"}, "a")
    assert [f.content for f in kept] == ["A", "C"]
    assert [h.id for h in shown] == ["h3", "h2"]
    _, _, asked = cool(facts, [], hits, {"a"}, None, keep_cold_hits=True)
    assert [h.id for h in asked] == ["h2", "h3", "h1"]
    # Equal in all else, facts go by id; the session's scope goes before that.
    assert [f.content for f in rank_facts(kept, NOW, RecallSettings())] == ["C", "A"]
    assert [f.content for f in rank_facts(kept, NOW, RecallSettings(), scope="a")] == ["A", "C"]
