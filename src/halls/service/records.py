"""The records of every tier: short-term entries, open loops, journal, long-term facts, briefs.

Each method validates its input, stamps ids and times, embeds what is
searched, and writes through the store; ``Memory`` delegates to ``Records``.
Long-term facts are read and flagged here, never written: only the
consolidator writes them. Every text a user writes (content, topic,
source, a loop's intent and trigger, a brief's texts, a forget flag's
reason, metadata's string values) is redacted (``halls.redact``) before it is embedded or stored, so
that a secret or an identifier reaches neither the files nor, through
consolidation, long-term memory. A short-term entry is written with its
``mentions`` edges (``halls.recall.entities``) in the same transaction, and
an edit of its content replaces them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from halls.config import Settings
from halls.errors import Conflict, InvalidInput, NotFound
from halls.importance import lifetime_factor, parse_importance
from halls.models import (
    CATEGORIES,
    FACT_STATUSES,
    LOOP_STATUSES,
    TRIGGER_TYPES,
    VISIBILITIES,
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    LoopStatus,
    NewJournal,
    NewShort,
    OpenLoop,
    ShortEntry,
    check_content,
    check_id,
    check_page,
    new_id,
    parse_time,
    to_datetime,
)
from halls.recall.entities import MENTIONS, mentions
from halls.redact import redact, redact_value
from halls.service.audit import actor, actor_admin
from halls.service.scopes import WorkScopes, scope_name
from halls.service.stores import Stores
from halls.storable import check_metadata, check_text
from halls.store import changes as ch

MAX_BATCH = 1000


def check_category(category: str | None) -> None:
    if category is not None and category not in CATEGORIES:
        raise InvalidInput(f"category must be one of {', '.join(CATEGORIES)}")


def _screened(value: Any, field: str = "metadata") -> tuple[dict[str, Any], int]:
    """Metadata (a JSON object) with every string value in it redacted, and the count."""
    if value is None:
        return {}, 0
    # Checked before redaction: what the store cannot hold is refused, never stored.
    return redact_value(check_metadata(value, field))


def _metadata(value: Any, field: str = "metadata") -> dict[str, Any]:
    return _screened(value, field)[0]


def _text(value: str, field: str) -> str:
    return redact(check_text(value, field))[0]


def _maybe(value: str | None, field: str) -> str | None:
    return None if value is None else _text(value, field)


class Records:
    """Reads and writes of the records of one or many stores."""

    def __init__(
        self,
        stores: Stores,
        settings: Settings,
        clock: Callable[[], float],
        embed: Callable[[list[str]], np.ndarray],
        scopes: WorkScopes,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._stores = stores
        self._embed = embed
        # Each write below is a turn of its store's work scopes.
        self._scopes = scopes

    # -- short-term --

    def remember(
        self,
        content: str,
        *,
        store: str | None = None,
        topic: str | None = None,
        source: str | None = None,
        pinned: bool = False,
        metadata: dict[str, Any] | None = None,
        occurred_at: Any = None,
        importance: Any = None,
        scope: Any = None,
    ) -> ShortEntry:
        try:
            item = NewShort(
                content=content,
                topic=topic,
                source=source,
                pinned=pinned,
                metadata=metadata or {},
                occurred_at=occurred_at,
                importance=importance,
                scope=scope,
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise InvalidInput(f"{where}: {first.get('msg', 'invalid value')}") from None
        return self.remember_many([item], store=store)[0]

    def remember_many(
        self, items: Sequence[NewShort], *, store: str | None = None
    ) -> list[ShortEntry]:
        """Remember a batch atomically: every entry is stored, or none is."""
        if not items:
            raise InvalidInput("items must not be empty")
        if len(items) > MAX_BATCH:
            raise InvalidInput(f"at most {MAX_BATCH} items per batch")
        now = self.clock()
        entries = []
        for n, item in enumerate(items):
            where = f"items[{n}]." if len(items) > 1 else ""
            check_content(item.content, f"{where}content")
            importance = parse_importance(item.importance, f"{where}importance")
            scope = scope_name(item.scope, f"{where}scope")
            occurred = parse_time(item.occurred_at, f"{where}occurred_at")
            if occurred is None:  # not ``or``: 0 is 1970, not "now"
                occurred = now
            entries.append(
                ShortEntry(
                    id=new_id("short"),
                    content=_text(item.content, f"{where}content"),
                    topic=_maybe(item.topic, f"{where}topic"),
                    source=_maybe(item.source, f"{where}source"),
                    pinned=item.pinned,
                    metadata=_metadata(item.metadata, f"{where}metadata"),
                    created_at=to_datetime(now),
                    occurred_at=to_datetime(occurred),
                    expires_at=None if item.pinned else to_datetime(now + self._ttl(importance)),
                    importance=importance,
                    scope=scope,
                )
            )
        s = self._stores.embedded(store, create=True)
        vectors = self._embed([e.content for e in entries])
        edges = [edge for e in entries for edge in mentions(e.id, e.content, now)]
        s.add_short(entries, vectors, edges, self._scopes.turn(s, [e.scope for e in entries]))
        return entries

    def _ttl(self, importance: float | None) -> float:
        """The short-term lifetime of an entry of this importance, in seconds."""
        cfg = self.settings.short
        return cfg.ttl_seconds * lifetime_factor(importance, cfg.importance_ttl_factor)

    def list_short(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[ShortEntry]:
        return self._stores.open(store).list_short(*check_page(limit, offset))

    def get_short(self, id: str, *, store: str | None = None) -> ShortEntry:
        entry = self._stores.open(store).get_short(check_id(id, "short"))
        if entry is None:
            raise NotFound(f"no short-term entry {id}")
        return entry

    def edit_short(
        self, id: str, changes: Mapping[str, Any], *, store: str | None = None
    ) -> ShortEntry:
        """Change an entry's content, topic, pinned, metadata or importance; new content
        is re-embedded.

        Pinning keeps the entry until it is deleted; unpinning starts its TTL
        from now. A new importance (None: unset) rescales the TTL of an
        unpinned entry from when it was written.
        """
        allowed = {"content", "topic", "pinned", "metadata", "importance"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise InvalidInput(f"cannot change '{unknown[0]}': only {', '.join(sorted(allowed))}")
        s = self._stores.embedded(store)
        old = self.get_short(id, store=store)
        if not changes:
            return old
        upd: dict[str, Any] = dict(changes)
        if "content" in upd:
            if not isinstance(upd["content"], str):
                raise InvalidInput("content must be a string")
            check_content(upd["content"], "content")
            upd["content"] = _text(upd["content"], "content")
        if "pinned" in upd and not isinstance(upd["pinned"], bool):
            raise InvalidInput("pinned must be true or false")
        if "topic" in upd and upd["topic"] is not None and not isinstance(upd["topic"], str):
            raise InvalidInput("topic must be a string or null")
        if "topic" in upd:
            upd["topic"] = _maybe(upd["topic"], "topic")
        if "metadata" in upd:
            upd["metadata"] = _metadata(upd["metadata"])
        if "importance" in upd:
            upd["importance"] = parse_importance(upd["importance"])
        importance = upd.get("importance", old.importance)
        if "pinned" in upd and upd["pinned"] != old.pinned:
            ttl = self._ttl(importance)
            upd["expires_at"] = None if upd["pinned"] else to_datetime(self.clock() + ttl)
        elif "importance" in upd and not old.pinned and importance != old.importance:
            written = old.created_at.timestamp()
            upd["expires_at"] = to_datetime(written + self._ttl(importance))
        new = old.model_copy(update=upd)
        vector = self._embed([new.content])[0] if new.content != old.content else None
        if not s.update_short(new, vector):
            raise NotFound(f"no short-term entry {id}")
        if vector is not None:
            # New words, new names. A second transaction: were it lost, the
            # entry would keep its old names' links (hashes, no text) until edited.
            old_edges = tuple(s.edges([id], [MENTIONS]))
            new_edges = tuple(mentions(id, new.content, self.clock()))
            s.apply_changes([ch.RemoveEdges(old_edges), ch.AddEdges(new_edges)], None)
        return new

    def delete_short(self, id: str, *, store: str | None = None) -> None:
        if not self._stores.open(store).delete_short(check_id(id, "short")):
            raise NotFound(f"no short-term entry {id}")

    # -- near-term: open loops --

    def add_loop(
        self,
        intent: str,
        *,
        store: str | None = None,
        topic: str | None = None,
        trigger_type: str = "manual",
        trigger_value: str | None = None,
        expires_at: Any = None,
        metadata: dict[str, Any] | None = None,
        importance: Any = None,
        scope: Any = None,
    ) -> OpenLoop:
        check_content(intent, "intent")
        weight = parse_importance(importance)
        scope = scope_name(scope)
        if trigger_type not in TRIGGER_TYPES:
            raise InvalidInput(f"trigger_type must be one of {', '.join(TRIGGER_TYPES)}")
        if trigger_type == "time":
            due = parse_time(trigger_value, "trigger_value")
            if due is None:
                raise InvalidInput("a time trigger needs trigger_value (ISO-8601 or unix seconds)")
            trigger_value = to_datetime(due).isoformat()
        if trigger_type == "topic" and not (trigger_value or topic):
            raise InvalidInput("a topic trigger needs trigger_value or topic")
        if trigger_type != "time":  # a time trigger's value is the ISO time made above
            trigger_value = _maybe(trigger_value, "trigger_value")
        intent = _text(intent, "intent")
        now = self.clock()
        loop = OpenLoop(
            id=new_id("near"),
            intent=intent,
            topic=_maybe(topic, "topic"),
            trigger_type=trigger_type,  # type: ignore[arg-type]
            trigger_value=trigger_value,
            expires_at=to_datetime(parse_time(expires_at, "expires_at")),
            metadata=_metadata(metadata),
            created_at=to_datetime(now),
            occurred_at=to_datetime(now),
            importance=weight,
            scope=scope,
        )
        s = self._stores.embedded(store, create=True)
        s.add_loop(loop, self._embed([intent])[0], self._scopes.turn(s, [scope]))
        return loop

    def list_loops(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[OpenLoop]:
        if status is not None and status not in LOOP_STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(LOOP_STATUSES)}")
        return self._stores.open(store).list_loops(status, *check_page(limit, offset))

    def get_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        loop = self._stores.open(store).get_loop(check_id(id, "near"))
        if loop is None:
            raise NotFound(f"no open loop {id}")
        return loop

    def complete_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        return self._close_loop(id, "done", store)

    def cancel_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        """Drop a loop unraised: it no longer applies, and will never be shown as due."""
        return self._close_loop(id, "cancelled", store)

    def _close_loop(self, id: str, status: LoopStatus, store: str | None) -> OpenLoop:
        s = self._stores.open(store)
        loop = self.get_loop(id, store=store)
        if loop.status != "open":
            raise Conflict(f"open loop {id} is already {loop.status}")
        closed = loop.model_copy(update={"status": status, "closed_at": to_datetime(self.clock())})
        s.update_loop(closed)
        return closed

    def delete_loop(self, id: str, *, store: str | None = None) -> None:
        if not self._stores.open(store).delete_loop(check_id(id, "near")):
            raise NotFound(f"no open loop {id}")

    # -- journal --

    def journal(
        self, events: Sequence[NewJournal], *, store: str | None = None
    ) -> list[JournalEvent]:
        """Append raw events, secrets and personal data redacted before anything is stored."""
        if not events:
            raise InvalidInput("items must not be empty")
        if len(events) > MAX_BATCH:
            raise InvalidInput(f"at most {MAX_BATCH} items per batch")
        now = self.clock()
        out = []
        for n, event in enumerate(events):
            where = f"items[{n}]." if len(events) > 1 else ""
            check_content(event.content, f"{where}content")
            text, hidden = redact(event.content)
            for name in ("role", "session_id"):
                if getattr(event, name) is not None:
                    check_text(getattr(event, name), f"{where}{name}")
            metadata, in_metadata = _screened(event.metadata, f"{where}metadata")
            scope = scope_name(event.scope, f"{where}scope")
            if event.visibility not in VISIBILITIES:
                raise InvalidInput(f"{where}visibility must be one of {', '.join(VISIBILITIES)}")
            occurred = parse_time(event.occurred_at, f"{where}occurred_at")
            if occurred is None:  # not ``or``: 0 is 1970, not "now"
                occurred = now
            out.append(
                JournalEvent(
                    id=new_id("journal"),
                    content=text,
                    role=event.role,
                    session_id=event.session_id,
                    redactions=hidden + in_metadata,
                    visibility=event.visibility,
                    scope=scope,
                    metadata=metadata,
                    created_at=to_datetime(now),
                    occurred_at=to_datetime(occurred),
                )
            )
        s = self._stores.open(store, create=True)
        s.add_journal(out, self._scopes.turn(s, [e.scope for e in out]))
        return out

    def list_journal(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[JournalEvent]:
        return self._stores.open(store).list_journal(*check_page(limit, offset))

    # -- long-term (read, flag) --

    def list_long(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
        category: str | None = None,
    ) -> list[LongFact]:
        if status is not None and status not in FACT_STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(FACT_STATUSES)}")
        check_category(category)
        return self._stores.open(store).list_facts(status, *check_page(limit, offset), category)

    def get_long(self, id: str, *, store: str | None = None) -> tuple[LongFact, list[LongFact]]:
        """The fact and its whole supersession chain, oldest first."""
        chain = self._stores.open(store).fact_chain(check_id(id, "long"))
        fact = next((f for f in chain if f.id == id), None)
        if fact is None:
            raise NotFound(f"no long-term fact {id}")
        return fact, chain

    def pin_fact(self, id: str, pinned: bool, *, store: str | None = None) -> LongFact:
        """Pin (never decays, never retired) or unpin a long-term fact.

        Only the consolidator writes facts otherwise: a pin waits for no run,
        and refuses while one holds the store (it would overwrite the fact).
        """
        s = self._stores.open(store)
        check_id(id, "long")
        if not s.try_lock_consolidation():
            raise Conflict(f"a consolidation run for store '{s.name}' is in progress; retry")
        try:
            fact = s.get_fact(id)
            if fact is None:
                raise NotFound(f"no long-term fact {id}")
            if fact.pinned != pinned:
                fact = fact.model_copy(update={"pinned": pinned})
                s.update_fact(fact)
            return fact
        finally:
            s.unlock_consolidation()

    def flag_forget(self, id: str, reason: str, *, store: str | None = None) -> ForgetFlag:
        """Record a forget flag; the consolidator acts on it at its next run."""
        check_content(reason, "reason")
        s = self._stores.open(store)
        if s.get_fact(check_id(id, "long")) is None:
            raise NotFound(f"no long-term fact {id}")
        flag = ForgetFlag(
            id=new_id("flag"),
            fact_id=id,
            reason=_text(reason, "reason"),  # a redaction mark still says PII (consolidate.pii)
            created_at=to_datetime(self.clock()),
            flagged_by=actor.get(),
            admin=actor_admin.get(),
        )
        s.add_flag(flag)
        return flag

    # -- briefs --

    def submit_brief(
        self,
        summary: str,
        *,
        store: str | None = None,
        promote_hints: Sequence[str] = (),
        completed_intents: Sequence[str] = (),
        noise: Sequence[str] = (),
    ) -> Brief:
        check_content(summary, "summary")
        for field, values in (
            ("promote_hints", promote_hints),
            ("completed_intents", completed_intents),
            ("noise", noise),
        ):
            if len(values) > MAX_BATCH or not all(isinstance(v, str) and v.strip() for v in values):
                raise InvalidInput(f"{field} must be a list of non-empty strings")
        # The intents and noise are redacted too: they are matched against
        # loops and statements that were.
        brief = Brief(
            id=new_id("brief"),
            summary=_text(summary, "summary"),
            promote_hints=[_text(v, "promote_hints") for v in promote_hints],
            completed_intents=[_text(v, "completed_intents") for v in completed_intents],
            noise=[_text(v, "noise") for v in noise],
            created_at=to_datetime(self.clock()),
        )
        self._stores.open(store, create=True).add_brief(brief)
        return brief
