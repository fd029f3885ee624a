"""Work scopes in the service: each write is a turn; scopes listed and marked done.

The rules are ``halls.scopes`` (pure); this module checks names, makes
each write's turn (a ``ScopeTurn`` the store takes in the write's own
transaction: one commit, and turns from several processes count one after
another), marks scopes done (``Store.update_scopes``) and answers which
scopes are open, for ``/context``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from halls.config import Settings
from halls.errors import InvalidInput, NotFound
from halls.models import MAX_LIST, SCOPE_STATUSES, Scope, Scopes, check_page
from halls.redact import redact
from halls.scopes import TURN_KEY, check_scope, mark_done, take_turn
from halls.service.stores import Stores
from halls.store.base import ScopeTurn, Store


def scope_name(value: object, field: str = "scope") -> str | None:
    """A scope as written: well-formed, and holding no secret or personal data
    (refused rather than redacted: a redacted name would name another scope)."""
    name = check_scope(value, field)
    if name is not None and redact(name)[1]:
        raise InvalidInput(f"{field} looks like it holds a secret or personal data")
    return name


class WorkScopes:
    def __init__(self, stores: Stores, settings: Settings, clock: Callable[[], float]) -> None:
        self._stores = stores
        self._settings = settings
        self._clock = clock

    def turn(self, s: Store, written: Iterable[str | None]) -> ScopeTurn | None:
        """The turn of a write to ``s`` for ``written``, for the store to take in the
        write's own transaction (one commit). None without an open scope or a named
        one: there is nothing to open or close, so nothing is counted."""
        names = list(dict.fromkeys(n for n in written if n))
        if not names and not s.list_scopes("open", 1, 0):
            return None
        cfg, now = self._settings.scopes, self._clock()
        return ScopeTurn(
            names,
            lambda turn, scopes: take_turn(
                turn, scopes, names, now, cfg.idle_turns, cfg.switch_turns
            ),
        )

    def listed(self, *, store: str | None, status: str | None, limit: int, offset: int) -> Scopes:
        if status is not None and status not in SCOPE_STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(SCOPE_STATUSES)}")
        s = self._stores.open(store)
        found = s.list_scopes(status, *check_page(limit, offset))
        return Scopes(turn=int(s.get_meta(TURN_KEY) or 0), scopes=found)

    def close(self, name: str, *, store: str | None) -> Scope:
        """Mark a scope done: it closes now (a closed one is then closed as done)."""
        checked = check_scope(name)
        if checked is None:
            raise InvalidInput("scope must not be empty")
        now = self._clock()

        def step(turn: int, scopes: dict[str, Scope]) -> tuple[int, list[Scope]]:
            found = scopes.get(checked)
            if found is None:
                raise NotFound(f"no scope {checked}")
            return turn, [mark_done(found, now)]

        return self._stores.open(store).update_scopes([checked], step)[0]

    @staticmethod
    def open_names(s: Store) -> set[str]:
        """The names of the store's open scopes. Reading the first MAX_LIST is enough:
        every scope closes within ``idle_turns`` turns of its last write, so only
        what the last few writes named is open."""
        return {x.name for x in s.list_scopes("open", MAX_LIST, 0)}
