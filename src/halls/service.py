"""The Memory service: the one layer that HTTP, MCP, the CLI and Python call.

It validates input, embeds, stamps ids and times, and composes the store's
primitives; it owns behaviour, never I/O details. Every public method takes
a ``store`` name (``None`` = the configured default store).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import ValidationError

from halls.config import Settings
from halls.context import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MIN_BUDGET,
    ContextBlock,
    assemble,
    token_counter,
)
from halls.embed import Embedder, build_embedder, fingerprint
from halls.errors import Conflict, EmbedderMismatch, InvalidInput, NotFound
from halls.models import (
    SEARCH_TIERS,
    Brief,
    ForgetFlag,
    Hit,
    JournalEvent,
    LongFact,
    NewJournal,
    NewShort,
    OpenLoop,
    SearchFilter,
    ShortEntry,
    check_content,
    check_id,
    check_page,
    new_id,
    parse_time,
    to_datetime,
)
from halls.recall.fusion import RETRIEVERS
from halls.redact import redact
from halls.registry import StoreRegistry, check_store_name
from halls.search import search
from halls.service_dreams import Dreaming, RunOutcomes
from halls.store.base import Store

MAX_BATCH = 1000
TRIGGER_TYPES = ("time", "topic", "session", "manual")
LOOP_STATUSES = ("open", "done", "cancelled", "expired")
FACT_STATUSES = ("active", "superseded", "demoted")
FINGERPRINT_KEY = "embedder"
CONTEXT_POOL = 1000
CONTEXT_RECALLS = 8


def _metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be a JSON object")
    return value


class Memory(Dreaming):
    """Memory for LLM agents: short-term, open loops, journal, long-term, recall."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings or Settings()
        self.clock = clock
        self._embedder = embedder
        self._registry = StoreRegistry(self.settings.data_dir, self.settings.storage)
        self._checked: set[str] = set()
        self.run_outcomes = RunOutcomes()

    # -- composition --

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = build_embedder(self.settings.embedder)
        return self._embedder

    def _name(self, store: str | None) -> str:
        return store or self.settings.default_store

    def _store(self, store: str | None, *, create: bool = False) -> Store:
        name = self._name(store)
        opened, _ = self._registry.open(name, create or name == self.settings.default_store)
        return opened

    def _embedding_store(self, store: str | None, *, create: bool = False) -> Store:
        """The store, after checking its vectors came from our embedder."""
        s = self._store(store, create=create)
        if s.name in self._checked:
            return s
        mine = fingerprint(self.embedder)
        theirs = s.get_meta(FINGERPRINT_KEY)
        if theirs is None:
            s.set_meta(FINGERPRINT_KEY, mine)
        elif theirs != mine:
            raise EmbedderMismatch(
                f"store '{s.name}' was embedded with {theirs} but the configured embedder is "
                f"{mine}; run `halls reembed --store {s.name}` to re-embed it with the "
                "configured embedder"
            )
        self._checked.add(s.name)
        return s

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    def close(self) -> None:
        self._registry.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- stores --

    def stores(self) -> list[str]:
        return self._registry.names()

    def create_store(self, name: str) -> str:
        check_store_name(name)  # "" must not fall back to the default store
        self._embedding_store(name, create=True)
        return name

    def store_exists(self, name: str) -> bool:
        return self._registry.exists(name)

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
    ) -> ShortEntry:
        try:
            item = NewShort(
                content=content,
                topic=topic,
                source=source,
                pinned=pinned,
                metadata=metadata or {},
                occurred_at=occurred_at,
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
        ttl = self.settings.short.ttl_seconds
        entries = []
        for n, item in enumerate(items):
            where = f"items[{n}]." if len(items) > 1 else ""
            check_content(item.content, f"{where}content")
            occurred = parse_time(item.occurred_at, f"{where}occurred_at") or now
            entries.append(
                ShortEntry(
                    id=new_id("short"),
                    content=item.content,
                    topic=item.topic,
                    source=item.source,
                    pinned=item.pinned,
                    metadata=_metadata(item.metadata),
                    created_at=to_datetime(now),
                    occurred_at=to_datetime(occurred),
                    expires_at=None if item.pinned else to_datetime(now + ttl),
                )
            )
        s = self._embedding_store(store, create=True)
        vectors = self._embed([e.content for e in entries])
        s.add_short(entries, vectors)
        return entries

    def list_short(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[ShortEntry]:
        return self._store(store).list_short(*check_page(limit, offset))

    def get_short(self, id: str, *, store: str | None = None) -> ShortEntry:
        entry = self._store(store).get_short(check_id(id, "short"))
        if entry is None:
            raise NotFound(f"no short-term entry {id}")
        return entry

    def delete_short(self, id: str, *, store: str | None = None) -> None:
        if not self._store(store).delete_short(check_id(id, "short")):
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
    ) -> OpenLoop:
        check_content(intent, "intent")
        if trigger_type not in TRIGGER_TYPES:
            raise InvalidInput(f"trigger_type must be one of {', '.join(TRIGGER_TYPES)}")
        if trigger_type == "time":
            due = parse_time(trigger_value, "trigger_value")
            if due is None:
                raise InvalidInput("a time trigger needs trigger_value (ISO-8601 or unix seconds)")
            trigger_value = to_datetime(due).isoformat()  # type: ignore[union-attr]
        if trigger_type == "topic" and not (trigger_value or topic):
            raise InvalidInput("a topic trigger needs trigger_value or topic")
        now = self.clock()
        loop = OpenLoop(
            id=new_id("near"),
            intent=intent,
            topic=topic,
            trigger_type=trigger_type,  # type: ignore[arg-type]
            trigger_value=trigger_value,
            expires_at=to_datetime(parse_time(expires_at, "expires_at")),
            metadata=_metadata(metadata),
            created_at=to_datetime(now),
            occurred_at=to_datetime(now),
        )
        s = self._embedding_store(store, create=True)
        s.add_loop(loop, self._embed([intent])[0])
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
        return self._store(store).list_loops(status, *check_page(limit, offset))

    def get_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        loop = self._store(store).get_loop(check_id(id, "near"))
        if loop is None:
            raise NotFound(f"no open loop {id}")
        return loop

    def complete_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        s = self._store(store)
        loop = self.get_loop(id, store=store)
        if loop.status != "open":
            raise Conflict(f"open loop {id} is already {loop.status}")
        done = loop.model_copy(update={"status": "done", "closed_at": to_datetime(self.clock())})
        s.update_loop(done)
        return done

    def delete_loop(self, id: str, *, store: str | None = None) -> None:
        if not self._store(store).delete_loop(check_id(id, "near")):
            raise NotFound(f"no open loop {id}")

    # -- journal --

    def journal(
        self, events: Sequence[NewJournal], *, store: str | None = None
    ) -> list[JournalEvent]:
        """Append raw events, secrets redacted before anything is stored."""
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
            occurred = parse_time(event.occurred_at, f"{where}occurred_at") or now
            out.append(
                JournalEvent(
                    id=new_id("journal"),
                    content=text,
                    role=event.role,
                    session_id=event.session_id,
                    redactions=hidden,
                    metadata=_metadata(event.metadata),
                    created_at=to_datetime(now),
                    occurred_at=to_datetime(occurred),
                )
            )
        self._store(store, create=True).add_journal(out)
        return out

    def list_journal(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[JournalEvent]:
        return self._store(store).list_journal(*check_page(limit, offset))

    # -- long-term (read, flag) --

    def list_long(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[LongFact]:
        if status is not None and status not in FACT_STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(FACT_STATUSES)}")
        return self._store(store).list_facts(status, *check_page(limit, offset))

    def get_long(self, id: str, *, store: str | None = None) -> tuple[LongFact, list[LongFact]]:
        """The fact and its whole supersession chain, oldest first."""
        s = self._store(store)
        fact = s.get_fact(check_id(id, "long"))
        if fact is None:
            raise NotFound(f"no long-term fact {id}")
        older: list[LongFact] = []
        seen = {fact.id}
        cursor = fact
        while cursor.supersedes and cursor.supersedes not in seen:
            prev = s.get_fact(cursor.supersedes)
            if prev is None:
                break
            older.append(prev)
            seen.add(prev.id)
            cursor = prev
        newer: list[LongFact] = []
        cursor = fact
        while cursor.superseded_by and cursor.superseded_by not in seen:
            nxt = s.get_fact(cursor.superseded_by)
            if nxt is None:
                break
            newer.append(nxt)
            seen.add(nxt.id)
            cursor = nxt
        return fact, [*reversed(older), fact, *newer]

    def flag_forget(self, id: str, reason: str, *, store: str | None = None) -> ForgetFlag:
        """Record a forget flag; the consolidator acts on it at its next run."""
        check_content(reason, "reason")
        s = self._store(store)
        if s.get_fact(check_id(id, "long")) is None:
            raise NotFound(f"no long-term fact {id}")
        flag = ForgetFlag(
            id=new_id("flag"), fact_id=id, reason=reason, created_at=to_datetime(self.clock())
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
        brief = Brief(
            id=new_id("brief"),
            summary=summary,
            promote_hints=list(promote_hints),
            completed_intents=list(completed_intents),
            noise=list(noise),
            created_at=to_datetime(self.clock()),
        )
        self._store(store, create=True).add_brief(brief)
        return brief

    # -- recall --

    def search(
        self,
        query: str,
        *,
        store: str | None = None,
        n_results: int = 5,
        tiers: Sequence[str] | None = None,
        topic: str | None = None,
        since: Any = None,
        until: Any = None,
        include_superseded: bool = False,
        retriever: str = "full",
    ) -> list[Hit]:
        """Hybrid search across tiers, merged by one explained score.

        ``retriever`` is "full" (fused BM25 and dense, with conversation
        context), "fused" (without context), "bm25" or "dense" alone.
        """
        check_content(query, "query")
        if not 1 <= n_results <= 100:
            raise InvalidInput("n_results must be between 1 and 100")
        if retriever not in RETRIEVERS:
            raise InvalidInput(f"retriever must be one of {', '.join(RETRIEVERS)}")
        chosen = tuple(dict.fromkeys(tiers)) if tiers else SEARCH_TIERS
        unknown = [t for t in chosen if t not in SEARCH_TIERS]
        if unknown:
            raise InvalidInput(f"unknown tier '{unknown[0]}': use {', '.join(SEARCH_TIERS)}")
        filt = SearchFilter(
            tiers=chosen,
            topic=topic,
            since=parse_time(since, "since"),
            until=parse_time(until, "until"),
            include_superseded=include_superseded,
        )
        s = self._embedding_store(store)
        return search(
            s, self.embedder, self.settings.recall, query, filt, n_results, retriever, self.clock()
        )

    # -- stats and maintenance --

    def stats(self, *, store: str | None = None) -> dict[str, Any]:
        s = self._store(store)
        counts = s.counts()
        return {
            "store": s.name,
            "counts": {
                "short": counts["short"],
                "near": counts["near"],
                "long": counts["long"],
                "journal": counts["journal"],
                "briefs": counts["briefs"],
                "forget_flags": counts["forget_flags"],
            },
            "size_bytes": s.size_bytes(),
            "embedder": s.get_meta(FINGERPRINT_KEY),
        }

    def open_store_counts(self) -> dict[str, dict[str, int]]:
        """The counts of ``stats`` for each store open in this process; opens none.

        For monitoring: a scrape must not open (and so keep open) every store
        on disk.
        """
        return {s.name: s.counts() for s in self._registry.opened()}

    def reembed(
        self, *, store: str | None = None, progress: Callable[[int], None] | None = None
    ) -> int:
        """Re-embed every record of a store with the configured embedder."""
        s = self._store(store)
        done = 0
        batch = max(self.settings.embedder.batch_size, 64)
        for rows in s.iter_texts(batch):
            ids = [r[0] for r in rows]
            s.set_vectors(ids, self._embed([r[1] for r in rows]))
            done += len(rows)
            if progress:
                progress(len(rows))
        s.set_meta(FINGERPRINT_KEY, fingerprint(self.embedder))
        self._checked.add(s.name)
        return done

    def count_embedded(self, *, store: str | None = None) -> int:
        c = self._store(store).counts()
        return c["short"] + c["near"] + c["long"]

    def fingerprint_of(self, store: str) -> str | None:
        return self._store(store).get_meta(FINGERPRINT_KEY)

    def now(self) -> datetime:
        return to_datetime(self.clock())  # type: ignore[return-value]

    # -- session-start context --

    def context(
        self,
        *,
        store: str | None = None,
        query: str | None = None,
        budget_tokens: int = DEFAULT_BUDGET,
    ) -> ContextBlock:
        """A token-budgeted block for a system prompt: due loops, recalls, top facts."""
        if (
            isinstance(budget_tokens, bool)
            or not isinstance(budget_tokens, int)
            or not (MIN_BUDGET <= budget_tokens <= MAX_BUDGET)
        ):
            raise InvalidInput(f"budget_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}")
        query = query if query and query.strip() else None
        s = self._store(store)
        # The newest CONTEXT_POOL active facts are ranked; older ones reach the
        # block through the query's recalls, which search every fact.
        facts = s.list_facts("active", CONTEXT_POOL, 0)
        loops = s.list_loops("open", CONTEXT_POOL, 0)
        hits = self.search(query, store=store, n_results=CONTEXT_RECALLS) if query else []
        return assemble(
            facts=facts,
            loops=loops,
            hits=hits,
            now=self.clock(),
            query=query,
            budget_tokens=budget_tokens,
            count_tokens=token_counter(getattr(self.embedder, "tokenizer", None)),
            cfg=self.settings.recall,
        )
