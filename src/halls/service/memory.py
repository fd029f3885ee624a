"""The Memory service: the one layer that HTTP, MCP, the CLI and Python call.

``Memory`` is a facade: it composes the service's parts and delegates to
them, so that every adapter sees one object with one set of methods. It is
one concept over 500 lines on purpose: each method is a few lines of
delegation, logging and audit, and splitting it would give the adapters
several objects to call where the design promises one.

- ``Stores`` (``stores.py``): named stores and their embedder check;
- ``Records`` (``records.py``): short-term, open loops, journal, long-term, briefs;
- the recall pipeline (``recall.py``) and the session-start block (``session.py``);
- ``Dreams`` (``dreams.py``): consolidation runs, and the ``Scheduler``
  (``scheduler.py``) that runs them on a timer, started by ``start_background``;
- ``Jobs`` (``jobs.py``): runs started now and watched as they go (progress).

Every public method takes a ``store`` name (``None`` = the configured default
store). Ids, times and embeddings are stamped here, never by the store.

The module passes 500 lines and is one concept: the service's public
surface, one method per operation that HTTP, MCP, the CLI and Python share,
each with the signature and docstring the adapters are written against, and
its audit entry. The behaviour is in the parts; what stays here composes
several of them (a search's checks and its reinforcement, the session
block's inputs, a store's numbers). Cutting the surface in two would give
``Memory`` halves to stack again (mixins) or change ``halls.__all__``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from halls.config import Settings
from halls.embed import Embedder, build_embedder, fingerprint
from halls.errors import Conflict, InvalidInput
from halls.models import (
    RECALL_TIERS,
    RETRIEVERS,
    SEARCH_TIERS,
    Brief,
    DueLoop,
    ForgetAbout,
    ForgetFlag,
    Hit,
    JournalEvent,
    LongFact,
    NewJournal,
    NewShort,
    OpenLoop,
    Recall,
    Run,
    Scope,
    Scopes,
    SearchFilter,
    ShortEntry,
    check_content,
    check_page,
    parse_time,
)
from halls.recall.relevance import DEFAULT_MIN_RELEVANCE, check_min_relevance
from halls.service.archive import Archives, ImportReport, Progress
from halls.service.audit import AuditLog
from halls.service.dreams import Dreams, RunOutcomes
from halls.service.erase import Erasure
from halls.service.hot import hot_block, hot_stats
from halls.service.jobs import Job, Jobs
from halls.service.notation import FORMATS
from halls.service.recall import search
from halls.service.records import Records, check_category
from halls.service.reinforce import Reinforcer
from halls.service.scheduler import Scheduler
from halls.service.scopes import WorkScopes, scope_name
from halls.service.session import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MIN_BUDGET,
    ContextBlock,
    TokenCounter,
    estimate_tokens,
    explain_due,
    token_counter,
)
from halls.service.shared import OnceEmbedder, Part, by_store, cool_each, merged, store_names
from halls.service.stores import Stores
from halls.service.texts import RecordTexts, record_texts

T = TypeVar("T")


def _ids_of(result: Any) -> list[str]:
    if isinstance(result, list):
        return [i for r in result for i in _ids_of(r)]
    found = getattr(result, "id", None)
    return [found] if isinstance(found, str) else []


# The newest CONTEXT_POOL active facts are ranked for the session block;
# older ones reach it through the query's recalls, which search every fact.
CONTEXT_POOL = 1000
CONTEXT_RECALLS = 8


class Memory:
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
        self._stores = Stores(self.settings, lambda: self.embedder)
        self._scopes = WorkScopes(self._stores, self.settings, clock)
        self._records = Records(self._stores, self.settings, clock, self._embed, self._scopes)
        self._dreams = Dreams(self._stores, self.settings, clock, self._embed)
        self._archives = Archives(self._stores, lambda: self.embedder, clock)
        self._reinforcer = Reinforcer(self._stores, self.settings.recall.reinforce_flush_seconds)
        self._erasure = Erasure(self._stores, self._dreams)
        self.audit = AuditLog(self.settings.data_dir)
        self._scheduler: Scheduler | None = None
        self._jobs = Jobs(clock)

    # -- composition --

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = build_embedder(self.settings.embedder)
        return self._embedder

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    def _token_counter(self) -> TokenCounter:
        """Tokens as the embedding model counts them (the session block's budget)."""
        return token_counter(getattr(self.embedder, "tokenizer", None))

    @property
    def run_outcomes(self) -> RunOutcomes:
        """Consolidations attempted by this process, by outcome (for /metrics)."""
        return self._dreams.run_outcomes

    def start_background(self) -> None:
        """Start the consolidation timer when ``consolidator.mode`` is thread; else nothing."""
        cfg = self.settings.consolidator
        if cfg.mode == "thread" and self._scheduler is None:
            self._scheduler = Scheduler(self, cfg.poll_seconds)
            self._scheduler.start()

    def close(self) -> None:
        """Stop the consolidation timer and let runs (and jobs) finish, then close every
        store."""
        if self._scheduler is not None:
            self._scheduler.stop()
            self._scheduler = None
        self._jobs.wait()
        self._reinforcer.close()
        self._stores.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the audit log --

    def _logged(self, store: str | None, action: str, result: T, ids: Sequence[str] = ()) -> T:
        """Append the mutation to the audit log (ids only, never content); return ``result``."""
        found = list(ids) or _ids_of(result)
        self.audit.record(self._stores.name(store), action, found, self.clock())
        return result

    def verify_audit(self) -> tuple[int, int | None]:
        """(entries checked, number of the first broken entry, or None when intact)."""
        return self.audit.verify()

    def audit_entries(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Audit entries newest first, of one store (every store when None)."""
        limit, offset = check_page(limit, offset)
        return self.audit.page(store, limit, offset)

    # -- stores --

    def stores(self) -> list[str]:
        return self._stores.names()

    def create_store(self, name: str) -> str:
        if self._stores.exists(name):
            return self._stores.create(name)  # already there: nothing to record
        return self._logged(name, "store.create", self._stores.create(name))

    def open_stores(self) -> None:
        """Open every existing store now, so that one the configuration cannot open
        (a wrong ``storage.encryption_key``, a damaged file) fails at startup, not
        at its first request."""
        self._stores.open_all()

    # -- records (short-term, open loops, journal, long-term, briefs) --

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
        """Remember one short-term entry; ``importance`` is a number in [0, 1] or a
        level (low, normal, high, critical), None unset (``halls.importance``);
        ``scope`` the work scope it is for (``halls.scopes``: a write is a turn)."""
        return self._logged(
            store,
            "short.add",
            self._records.remember(
                content,
                store=store,
                topic=topic,
                source=source,
                pinned=pinned,
                metadata=metadata,
                occurred_at=occurred_at,
                importance=importance,
                scope=scope,
            ),
        )

    def remember_many(
        self, items: Sequence[NewShort], *, store: str | None = None
    ) -> list[ShortEntry]:
        """Remember a batch atomically: every entry is stored, or none is."""
        return self._logged(store, "short.add", self._records.remember_many(items, store=store))

    def list_short(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[ShortEntry]:
        return self._records.list_short(store=store, limit=limit, offset=offset)

    def get_short(self, id: str, *, store: str | None = None, reinforce: bool = True) -> ShortEntry:
        """The entry; opening it by id is a use, and reinforces it (``_opened``)."""
        entry = self._records.get_short(id, store=store)
        self._opened(store, entry.id, reinforce)
        return entry

    def _opened(self, store: str | None, id: str, reinforce: bool) -> None:
        """Count the record ``id`` as used now, unless ``reinforce`` is False (an
        inspection): the one evidence of use a read gives."""
        if reinforce:
            self._reinforcer.note(self._stores.name(store), [id], self.clock())

    def delete_short(self, id: str, *, store: str | None = None) -> None:
        self._records.delete_short(id, store=store)
        self._logged(store, "short.delete", None, [id])

    def edit_short(
        self, id: str, changes: dict[str, Any], *, store: str | None = None
    ) -> ShortEntry:
        """Change content, topic, pinned, metadata or importance (``changes``); new
        content is re-embedded, a new importance rescales the TTL."""
        return self._logged(store, "short.edit", self._records.edit_short(id, changes, store=store))

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
        return self._logged(
            store,
            "near.add",
            self._records.add_loop(
                intent,
                store=store,
                topic=topic,
                trigger_type=trigger_type,
                trigger_value=trigger_value,
                expires_at=expires_at,
                metadata=metadata,
                importance=importance,
                scope=scope,
            ),
        )

    def list_loops(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[OpenLoop]:
        return self._records.list_loops(store=store, status=status, limit=limit, offset=offset)

    def get_loop(self, id: str, *, store: str | None = None, reinforce: bool = True) -> OpenLoop:
        loop = self._records.get_loop(id, store=store)
        self._opened(store, loop.id, reinforce)
        return loop

    def complete_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        return self._logged(store, "near.complete", self._records.complete_loop(id, store=store))

    def cancel_loop(self, id: str, *, store: str | None = None) -> OpenLoop:
        return self._logged(store, "near.cancel", self._records.cancel_loop(id, store=store))

    def due_loops(
        self, *, store: str | None = None, query: str | None = None, project: str | None = None
    ) -> list[DueLoop]:
        """The open loops due now, with why: time passed, session start, or topic in the query.

        A topic trigger fires when its words appear in ``query`` or in the
        session's ``project`` name.
        """
        s = self._stores.open(store)
        words = " ".join(w for w in (query, project) if w and w.strip()) or None
        return [
            DueLoop(
                id=loop.id,
                intent=loop.intent,
                topic=loop.topic,
                trigger_type=loop.trigger_type,
                trigger_value=loop.trigger_value,
                reason=reason,
            )
            for loop, reason in explain_due(
                s.list_loops("open", CONTEXT_POOL, 0), self.clock(), words
            )
        ]

    def delete_loop(self, id: str, *, store: str | None = None) -> None:
        self._records.delete_loop(id, store=store)
        self._logged(store, "near.delete", None, [id])

    def journal(
        self, events: Sequence[NewJournal], *, store: str | None = None
    ) -> list[JournalEvent]:
        """Append raw events, secrets redacted before anything is stored."""
        return self._logged(store, "journal.add", self._records.journal(events, store=store))

    def list_journal(
        self, *, store: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[JournalEvent]:
        return self._records.list_journal(store=store, limit=limit, offset=offset)

    # -- work scopes --

    def list_scopes(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Scopes:
        """The store's work scopes (of a status: open, closed), the last written for
        first, and its turn count."""
        return self._scopes.listed(store=store, status=status, limit=limit, offset=offset)

    def close_scope(self, name: str, *, store: str | None = None) -> Scope:
        """Mark a work scope done: closed, its memories leave the session-start block."""
        return self._logged(store, "scope.close", self._scopes.close(name, store=store), [name])

    def list_long(
        self,
        *,
        store: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
        category: str | None = None,
    ) -> list[LongFact]:
        return self._records.list_long(
            store=store, status=status, limit=limit, offset=offset, category=category
        )

    def get_long(
        self, id: str, *, store: str | None = None, reinforce: bool = True
    ) -> tuple[LongFact, list[LongFact]]:
        """The fact and its whole supersession chain, oldest first; the fact is used."""
        fact, chain = self._records.get_long(id, store=store)
        self._opened(store, fact.id, reinforce)
        return fact, chain

    def pin_fact(self, id: str, pinned: bool = True, *, store: str | None = None) -> LongFact:
        """Pin a long-term fact (it never decays nor is retired), or unpin it."""
        action = "long.pin" if pinned else "long.unpin"
        return self._logged(store, action, self._records.pin_fact(id, pinned, store=store))

    def flag_forget(self, id: str, reason: str, *, store: str | None = None) -> ForgetFlag:
        """Record a forget flag; the consolidator acts on it at its next run.

        The flag records the caller (``acting_as``): only an admin's flag purges.
        """
        return self._logged(
            store, "long.flag", self._records.flag_forget(id, reason, store=store), [id]
        )

    def submit_brief(
        self,
        summary: str,
        *,
        store: str | None = None,
        promote_hints: Sequence[str] = (),
        completed_intents: Sequence[str] = (),
        noise: Sequence[str] = (),
    ) -> Brief:
        return self._logged(
            store,
            "brief.add",
            self._records.submit_brief(
                summary,
                store=store,
                promote_hints=promote_hints,
                completed_intents=completed_intents,
                noise=noise,
            ),
        )

    # -- recall --

    def search(
        self,
        query: str,
        *,
        store: str | None = None,
        stores: Sequence[str] | None = None,
        n_results: int = 5,
        tiers: Sequence[str] | None = None,
        topic: str | None = None,
        since: Any = None,
        until: Any = None,
        include_superseded: bool = False,
        retriever: str = "full",
        reinforce: bool = True,
        category: str | None = None,
        min_relevance: float = DEFAULT_MIN_RELEVANCE,
    ) -> list[Hit]:
        """Hybrid search across tiers, merged by one explained score.

        ``retriever`` is "full" (fused BM25 and dense, with conversation
        context), "fused" (without context), "bm25" or "dense" alone. Being
        returned is not being used: no hit is reinforced (opening one by id
        is, ``get_short``/``get_long``/``get_loop``). With ``co_recall`` in
        ``recall.graph_edges``, the best ``recall.reinforce_top`` hits are
        linked pairwise unless ``reinforce`` is False. The hits
        are returned only if their ``relevance`` (the estimated probability
        that the search found a memory relevant to the query,
        ``halls.recall.relevance``) is at least ``min_relevance``: none when
        the store knows nothing about the query. 0 returns them all. A
        long-term fact hit carries ``sources``: the records it derives from
        that match the query best (``halls.recall.sources``).
        ``stores`` (instead of ``store``) searches several stores, their hits
        merged into one list (``halls.service.shared``); each hit names its store.
        """
        check_content(query, "query")
        names = store_names(store, stores)
        if not 1 <= n_results <= 100:
            raise InvalidInput("n_results must be between 1 and 100")
        check_min_relevance(min_relevance)
        if retriever not in RETRIEVERS:
            raise InvalidInput(f"retriever must be one of {', '.join(RETRIEVERS)}")
        # The journal only when named: a default search ranks as it always did.
        chosen = tuple(dict.fromkeys(tiers)) if tiers else SEARCH_TIERS
        unknown = [t for t in chosen if t not in RECALL_TIERS]
        if unknown:
            raise InvalidInput(f"unknown tier '{unknown[0]}': use {', '.join(RECALL_TIERS)}")
        check_category(category)
        filt = SearchFilter(
            tiers=chosen,
            topic=topic,
            category=category,
            since=parse_time(since, "since"),
            until=parse_time(until, "until"),
            include_superseded=include_superseded,
        )
        # Every store is opened (and checked) before any is searched.
        opened = [self._stores.embedded(name) for name in names]
        now = self.clock()
        cfg = self.settings.recall
        found = []
        embedder = OnceEmbedder(self.embedder) if len(opened) > 1 else self.embedder
        for s in opened:
            hits = search(s, embedder, cfg, query, filt, n_results, retriever, now)
            # A relevance of None (an embedder the model was not fitted for) filters nothing.
            hits = [h for h in hits if h.relevance is None or h.relevance >= min_relevance]
            found.append((s.name, hits[:n_results]))  # the journal's pass may add as many again
        hits = merged(found, n_results)
        if reinforce and "co_recall" in cfg.graph_edges:
            # Journal events are the record, not memories: they join no association.
            kept = [h for h in hits if h.tier != "journal"][: cfg.reinforce_top]
            for name, ids in by_store(kept).items():
                self._reinforcer.link(name, ids, now)
        return hits

    def recall(
        self,
        query: str,
        *,
        store: str | None = None,
        stores: Sequence[str] | None = None,
        **options: Any,
    ) -> Recall:
        """``search``, plus the open loops due for this query when the search covers loops.

        Loops are not ranked with the hits: a due loop is something to act on,
        shown whatever its similarity to the query. With ``stores``, each
        store's due loops, each naming its store.
        """
        hits = self.search(query, store=store, stores=stores, **options)
        tiers = options.get("tiers")
        due = []
        if not tiers or "near" in tiers:
            for name in store_names(store, stores):
                named = self._stores.name(name)
                due += [
                    d.model_copy(update={"store": named})
                    for d in self.due_loops(store=name, query=query)
                ]
        return Recall(results=hits, due=due)

    def context(
        self,
        *,
        store: str | None = None,
        stores: Sequence[str] | None = None,
        query: str | None = None,
        project: str | None = None,
        budget_tokens: int = DEFAULT_BUDGET,
        min_relevance: float = DEFAULT_MIN_RELEVANCE,
        format: str = "verbose",
        scope: str | None = None,
    ) -> ContextBlock:
        """A token-budgeted block for a system prompt: due loops, the hot set, recalls.

        Memories of closed work scopes are cold (``halls.scopes``): left out,
        but for a query's recalls, which rank them after the rest. ``scope`` is
        the one the session works in: its facts and recalls come first.

        ``project`` (e.g. the working directory's name) is what the session is
        about when no query is known yet: memories mentioning it come first, and
        topic loops on it fire. The relevant memories are the search hits that
        clear ``min_relevance`` (as ``search``): none for an unrelated query.
        With a project and no query, they are the hits that name the project.
        The facts shown are the hot set (``halls.service.hot``), within
        ``context.hot_tokens``; ``format`` is ``verbose`` or ``terse``
        (``halls.service.notation``). With ``stores``, the facts, loops and
        recalls of every store named share the one budget.
        """
        check_min_relevance(min_relevance)
        names = store_names(store, stores)
        if format not in FORMATS:
            raise InvalidInput(f"format must be one of {', '.join(FORMATS)}")
        if (
            isinstance(budget_tokens, bool)
            or not isinstance(budget_tokens, int)
            or not (MIN_BUDGET <= budget_tokens <= MAX_BUDGET)
        ):
            raise InvalidInput(f"budget_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}")
        current = scope_name(scope)
        about = " ".join(w.strip() for w in (project, query) if w and w.strip()) or None
        opened = [self._stores.open(name) for name in names]
        parts: list[Part] = [
            (
                s.name,
                s.list_facts("active", CONTEXT_POOL, 0),
                s.list_loops("open", CONTEXT_POOL, 0),
                self._scopes.open_names(s),
            )
            for s in opened
        ]
        asked = query is not None and query.strip() != ""
        hits = (
            self.search(
                about,
                stores=[s.name for s in opened],
                n_results=CONTEXT_RECALLS,
                reinforce=False,
                # A project name alone is a name, not a question: the
                # relevance was fitted on questions, and a memory is about
                # the project when it names it (a full-text match).
                min_relevance=min_relevance if asked else 0.0,
            )
            if about
            else []
        )
        if about and not asked:
            hits = [h for h in hits if h.score_detail.get("bm25") is not None]
        facts, loops, hits = cool_each(parts, hits, current, keep_cold_hits=asked)
        block = hot_block(
            facts=facts,
            loops=loops,
            hits=hits,
            now=self.clock(),
            query=about,
            budget_tokens=budget_tokens,
            hot_tokens=self.settings.context.hot_tokens,
            count_tokens=self._token_counter(),
            cfg=self.settings.recall,
            format=format,  # type: ignore[arg-type]  # checked above
            scope=current,
        )
        # What the block shows the agent at the start of a session is in use: it
        # keeps those memories from fading into retirement (a search's hits are
        # only returned, and reinforce nothing).
        where = {h.id: h.store for h in hits}
        for name, f, lp, _ in parts:
            where.update({x.id: name for x in [*f, *lp]})
        shown: dict[str, list[str]] = {}
        for i in block.ids:
            shown.setdefault(where.get(i) or opened[0].name, []).append(i)
        for name, ids in shown.items():
            self._reinforcer.note(name, ids, self.clock())
        return block

    # -- stats and maintenance --

    def stats(self, *, store: str | None = None) -> dict[str, Any]:
        s = self._stores.open(store)
        counts = s.counts()
        # Briefs and flags a run has already read are history, not work waiting.
        last = s.last_applied_run()
        since = last.started_at.timestamp() if last else None
        facts = s.list_facts("active", CONTEXT_POOL, 0) if counts["long"] else []
        return {
            "store": s.name,
            "counts": {
                "short": counts["short"],
                "near": counts["near"],
                "long": counts["long"],
                "journal": counts["journal"],
                "briefs": len(s.briefs_since(since)) if counts["briefs"] else 0,
                "forget_flags": len(s.list_flags("pending")) if counts["forget_flags"] else 0,
            },
            "size_bytes": s.size_bytes(),
            "embedder": self._stores.fingerprint_of(s.name),
            "hot": hot_stats(
                facts,
                now=self.clock(),
                budget_tokens=self.settings.context.hot_tokens,
                # No fact, no count: a store without facts loads no model.
                count_tokens=self._token_counter() if facts else estimate_tokens,
                cfg=self.settings.recall,
            ),
        }

    def open_store_counts(self) -> dict[str, dict[str, int]]:
        """The counts of ``stats`` for each store open in this process; opens none.

        For monitoring: a scrape must not open (and so keep open) every store
        on disk.
        """
        return {s.name: s.counts() for s in self._stores.opened()}

    def reembed(
        self, *, store: str | None = None, progress: Callable[[int], None] | None = None
    ) -> int:
        """Re-embed every record of a store with the configured embedder."""
        s = self._stores.open(store)
        done = 0
        batch = max(self.settings.embedder.batch_size, 64)
        for rows in s.iter_texts(batch):
            ids = [r[0] for r in rows]
            s.set_vectors(ids, self._embed([r[1] for r in rows]))
            done += len(rows)
            if progress:
                progress(len(rows))
        self._stores.mark_embedded(s)
        return done

    def count_embedded(self, *, store: str | None = None) -> int:
        c = self._stores.open(store).counts()
        return c["short"] + c["near"] + c["long"]

    def fingerprint_of(self, store: str) -> str | None:
        """The fingerprint of the embedder that wrote the store's vectors, if any yet."""
        return self._stores.fingerprint_of(store)

    def probe_embedder(self) -> str:
        """Load the configured embedder, embed one text, and return its fingerprint."""
        self.embedder.embed(["probe"])
        return fingerprint(self.embedder)

    # -- export, import, backup --

    def export_store(
        self,
        out: IO[bytes],
        *,
        store: str | None = None,
        passphrase: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """Write the whole store, every tier with its history, as one archive to ``out``.

        Encrypted (AES-256-GCM, scrypt) when a ``passphrase`` is given.
        Returns the count of each kind of record written.
        """
        # Recalls counted so far are part of what the archive keeps.
        self._reinforcer.flush(self._stores.name(store))
        counts = self._archives.export(out, store=store, passphrase=passphrase, progress=progress)
        # Not a change, but the whole store leaving: worth a line in the log.
        return self._logged(store, "store.export", counts)

    def import_store(
        self,
        path: Path,
        *,
        store: str | None = None,
        passphrase: str | None = None,
        on_conflict: str = "keep-existing",
        overwrite: bool = False,
        dry_run: bool = False,
        reembed: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import an archive; refused whole (nothing written) if it is damaged or altered.

        A store that already holds records needs ``overwrite``; ids already
        there are settled by ``on_conflict`` (keep-existing, keep-imported,
        keep-newer).
        """
        report = self._archives.import_archive(
            path,
            store=store,
            passphrase=passphrase,
            on_conflict=on_conflict,
            overwrite=overwrite,
            dry_run=dry_run,
            reembed=reembed,
            progress=progress,
        )
        # One entry for the whole import: its ids could be millions.
        return report if dry_run else self._logged(store, "store.import", report)

    def backup_store(self, out: Path, *, store: str | None = None, overwrite: bool = False) -> int:
        """A consistent copy of the store's file taken while it serves; its size in bytes."""
        return self._logged(
            store, "store.backup", self._archives.backup(out, store=store, overwrite=overwrite)
        )

    # -- consolidation ("dreaming") --

    def consolidate(
        self,
        *,
        store: str | None = None,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> Run:
        """Run the consolidator on a store now; a dry run returns the plan, changes nothing.
        ``progress(stage, done, total)`` is told how far the run is as it goes."""
        # Strength decays from the recalls counted so far: write them first.
        self._reinforcer.flush(self._stores.name(store))
        run = self._dreams.consolidate(store=store, dry_run=dry_run, progress=progress)
        return run if dry_run else self._logged(store, "consolidate.run", run)

    def start_consolidation(self, *, store: str | None = None, dry_run: bool = False) -> Job:
        """Start a consolidation run as a job (``halls.service.jobs``) and answer at once;
        ``consolidation_job`` tells how far it is, and its run record when done."""
        s = self._stores.embedded(store)  # an unknown store fails here, not in the job
        if s.consolidation_locked():
            raise Conflict(f"a consolidation run for store '{s.name}' is in progress")
        name = s.name
        return self._jobs.start(
            name,
            dry_run,
            lambda report: self.consolidate(store=name, dry_run=dry_run, progress=report),
        )

    def consolidation_job(self, id: str, *, store: str | None = None) -> Job:
        """A consolidation job of this process: its status, stage, done / total, result."""
        return self._jobs.get(id, self._stores.name(store))

    def list_runs(self, *, store: str | None = None, limit: int = 50, offset: int = 0) -> list[Run]:
        """Consolidation run records, newest first."""
        return self._dreams.list_runs(store=store, limit=limit, offset=offset)

    def get_run(self, id: str, *, store: str | None = None) -> Run:
        return self._dreams.get_run(id, store=store)

    def record_texts(self, ids: list[str], *, store: str | None = None) -> RecordTexts:
        """The text of each record id of any tier (a run's inputs); gone ones under ``missing``."""
        return record_texts(self._stores.open(store), ids)

    def review_run(
        self,
        id: str,
        *,
        approve: list[int] | None = None,
        reject: list[int] | None = None,
        store: str | None = None,
    ) -> Run:
        """Approve and reject actions (numbered from 1) of a dry run's plan; all or none."""
        run = self._dreams.review_run(id, approve=approve, reject=reject, store=store)
        return self._logged(store, "consolidate.review", run, [run.id])

    def apply_run(self, id: str, *, store: str | None = None) -> Run:
        """Apply a reviewed plan's approved actions as one run; the others are dropped."""
        self._reinforcer.flush(self._stores.name(store))
        return self._logged(store, "consolidate.apply", self._dreams.apply_run(id, store=store))

    def revert_run(self, id: str, *, store: str | None = None) -> Run:
        """Undo a run's non-purge actions (purges are irreversible by design)."""
        return self._logged(store, "consolidate.revert", self._dreams.revert_run(id, store=store))

    def consolidation_due(self, store: str) -> bool:
        return self._dreams.consolidation_due(store)

    def consolidation_status(self, *, store: str | None = None) -> dict[str, Any]:
        """Mode, next due time, whether a run is in progress, the last run, and
        ``checks``: how often the scheduler has looked at the stores since it
        started (``None`` unless ``mode`` is thread)."""
        status = self._dreams.consolidation_status(store=store)
        status["checks"] = self._scheduler.checks if self._scheduler is not None else None
        return status

    def purge_fact(self, id: str, *, store: str | None = None) -> Run:
        """The operator's emergency door: purge one fact now, recorded as a run."""
        return self._logged(store, "long.purge", self._dreams.purge_fact(id, store=store), [id])

    # -- deletion for good --

    def delete_journal(self, id: str, *, store: str | None = None) -> None:
        """Purge one journal event: its bytes leave the store's files."""
        self._erasure.delete_journal(id, store=store)
        self._logged(store, "journal.purge", None, [id])

    def delete_fact(self, id: str, *, store: str | None = None) -> Run:
        """Purge a fact as a PII forget does (it, its sources, its personal data), now."""
        return self._logged(store, "long.purge", self._erasure.delete_fact(id, store=store), [id])

    def delete_store(self, name: str) -> None:
        """Delete a store and every file of it."""
        self._erasure.delete_store(name)
        self._logged(name, "store.delete", None)

    def forget_about(
        self,
        *,
        store: str | None = None,
        subject: str | None = None,
        query: str | None = None,
        dry_run: bool = True,
    ) -> ForgetAbout:
        """Find (dry run) or purge every record of every tier about ``subject`` or ``query``."""
        found = self._erasure.forget_about(
            store=store, subject=subject, query=query, dry_run=dry_run
        )
        if not dry_run:
            self._logged(store, "forget_about", None, [r.id for r in found.found])
        return found
