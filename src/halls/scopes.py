"""Work scopes (pure): which scopes a turn opens, keeps and closes.

A scope is what a memory was written for: a feature, a bug, a phase
(``web/fix-login``). Writers name it (``scope`` on a short-term entry, an
open loop or a journal event; the Claude Code hooks name the project and
its git branch). A store counts *turns*: each write of short-term entries
(one batch is one turn), of an open loop or of journal events is one,
whether it names a scope or not. Then:

- a scope opens on the first turn that writes for it (and a closed one
  opens again when a turn writes for it);
- it closes when it is marked done (``close``), when ``idle_turns`` turns
  (default 6) have passed since the last one that wrote for it (``idle``),
  or when ``switch_turns`` turns (default 3) have written for other
  scopes since then (``switched``): turns that name no scope do not count
  towards a switch, only towards idleness.

A closed scope is *cold*: ``/context`` leaves its records out of the
session-start block (and ranks them after every other recall of a query);
search still finds them. A record whose scope is not open (closed, or a
name the store has no scope for, as after an import) is cold the same way;
a record without a scope never is. A fact the consolidator promotes takes
the scope most of its sources were written for.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from halls.errors import InvalidInput
from halls.models import SCOPE_PATTERN, Scope, ScopeEnd, to_datetime

# Where a store keeps its turn count: a meta value (``Store.update_scopes``).
TURN_KEY = "scope_turn"
_NAME = re.compile(SCOPE_PATTERN.removesuffix("$") + r"\Z")


def check_scope(value: Any, field: str = "scope") -> str | None:
    """A scope's name as given, or None; anything else is ``InvalidInput``."""
    if value is None:
        return None
    if not isinstance(value, str) or not _NAME.match(value):
        raise InvalidInput(
            f"{field} must be 1-128 characters of letters, digits and ._/:#- "
            "(starting with a letter or digit)"
        )
    return value


def take_turn(
    turn: int,
    scopes: Mapping[str, Scope],
    written: Sequence[str],
    now: float,
    idle_turns: int,
    switch_turns: int,
) -> tuple[int, list[Scope]]:
    """The turn after ``turn``, which wrote for ``written``, and the scopes it changes.

    ``scopes`` holds every open scope and each of ``written`` the store has.
    """
    this = turn + 1
    named = set(written)
    changed: list[Scope] = []
    for name in dict.fromkeys(written):
        old = scopes.get(name)
        if old is None:
            changed.append(Scope(name=name, opened_at=to_datetime(now), last_turn=this))
            continue
        update: dict[str, Any] = {"turns": old.turns + 1, "last_turn": this, "elsewhere": 0}
        if old.status == "closed":
            update |= {
                "status": "open",
                "opened_at": to_datetime(now),
                "closed_at": None,
                "closed_because": None,
            }
        changed.append(old.model_copy(update=update))
    for scope in scopes.values():
        if scope.status != "open" or scope.name in named:
            continue
        elsewhere = scope.elsewhere + (1 if named else 0)
        why: ScopeEnd | None = None
        if elsewhere >= switch_turns:
            why = "switched"
        elif this - scope.last_turn >= idle_turns:
            why = "idle"
        if why is not None:
            changed.append(_closed(scope, why, now, elsewhere))
        elif elsewhere != scope.elsewhere:
            changed.append(scope.model_copy(update={"elsewhere": elsewhere}))
    return this, changed


def mark_done(scope: Scope, now: float) -> Scope:
    """The scope marked done: closed now, or (closed already) closed because done."""
    if scope.status == "closed":
        return scope.model_copy(update={"closed_because": "done"})
    return _closed(scope, "done", now, scope.elsewhere)


def _closed(scope: Scope, why: ScopeEnd, now: float, elsewhere: int) -> Scope:
    return scope.model_copy(
        update={
            "status": "closed",
            "closed_at": to_datetime(now),
            "closed_because": why,
            "elsewhere": elsewhere,
        }
    )


def common_scope(values: Iterable[str | None]) -> str | None:
    """The scope most of ``values`` name (the first named of a tie), or None."""
    named = Counter(v for v in values if v)
    return named.most_common(1)[0][0] if named else None


def is_cold(scope: str | None, open_scopes: set[str]) -> bool:
    """Whether a record of ``scope`` is cold: it names a scope that is not open."""
    return scope is not None and scope not in open_scopes


__all__ = ["TURN_KEY", "check_scope", "common_scope", "is_cold", "mark_done", "take_turn"]
