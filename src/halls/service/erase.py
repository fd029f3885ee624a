"""Deletion for good, online: one journal event, one fact, a store, everything about X.

Each goes through ``Store.purge`` (or, for a store, the backend's delete):
rows, vectors, full-text rows and edges go, and the files are rewritten so
that no byte of the content is left in them, the WAL included. A purge takes
the store's consolidation lock, so it never interleaves with a run (409 when
one is in progress).

``forget_about`` is "delete everything you know about X": every record of
every tier, the journal included, whose text holds the subject (any case),
or every word of the query. Its dry run lists them and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from halls.errors import Conflict, InvalidInput, NotFound, StoreNotFound
from halls.models import MAX_LIST, Erased, ForgetAbout, Run, check_id
from halls.service.dreams import Dreams
from halls.service.stores import Stores, check_store_name
from halls.store.base import Store

# A subject of one letter would match nearly everything: a slip, not a request.
MIN_SUBJECT = 2
_WORD = re.compile(r"\w+")

__all__ = ["Erasure"]


def _pages(read: Callable[[int, int], list]) -> Iterator:
    offset = 0
    while True:
        page = read(MAX_LIST, offset)
        yield from page
        if len(page) < MAX_LIST:
            return
        offset += MAX_LIST


def _records(s: Store) -> Iterator[Erased]:
    """Every record of every tier with the text a match is looked for in."""
    for e in _pages(s.list_short):
        yield Erased(id=e.id, tier="short", text=" ".join(filter(None, [e.content, e.topic])))
    for loop in _pages(lambda n, o: s.list_loops(None, n, o)):
        parts = [loop.intent, loop.topic, loop.trigger_value]
        yield Erased(id=loop.id, tier="near", text=" ".join(filter(None, parts)))
    for f in _pages(lambda n, o: s.list_facts(None, n, o)):
        yield Erased(id=f.id, tier="long", text=" ".join(filter(None, [f.content, f.topic])))
    for j in _pages(s.list_journal):
        yield Erased(id=j.id, tier="journal", text=j.content)


class Erasure:
    """Deletion for good of records, stores and everything about a subject."""

    def __init__(self, stores: Stores, dreams: Dreams) -> None:
        self._stores = stores
        self._dreams = dreams

    def delete_journal(self, id: str, *, store: str | None = None) -> None:
        s = self._stores.open(store)
        event = s.get_journal(check_id(id, "journal"))
        if event is None:
            raise NotFound(f"no journal event {id}")
        with _locked(s):
            s.purge(facts=[], short=[], journal=[event.id], values=[], flags=[])

    def delete_fact(self, id: str, *, store: str | None = None) -> Run:
        """Purge the fact as a PII forget does: it, its sources, its personal data."""
        return self._dreams.purge_fact(id, store=store)

    def delete_store(self, name: str) -> None:
        check_store_name(name)
        try:
            s = self._stores.open(name)
        except StoreNotFound:
            raise NotFound(f"no store named '{name}'") from None
        if s.consolidation_locked():
            raise Conflict(f"a consolidation run for store '{name}' is in progress")
        if not self._stores.delete(name):
            raise NotFound(f"no store named '{name}'")

    def forget_about(
        self,
        *,
        store: str | None = None,
        subject: str | None = None,
        query: str | None = None,
        dry_run: bool = True,
    ) -> ForgetAbout:
        if (subject is None) == (query is None):
            raise InvalidInput("give either subject or query")
        needle = (subject if subject is not None else query) or ""
        if len(needle.strip()) < MIN_SUBJECT:
            raise InvalidInput(f"the subject or query needs at least {MIN_SUBJECT} characters")
        s = self._stores.open(store)
        if subject is not None:
            pattern = re.compile(re.escape(subject.strip()), re.IGNORECASE)

            def matches(text: str) -> bool:
                return pattern.search(text) is not None
        else:
            # A query of no word at all ("!!") matches nothing.
            words = {w.lower() for w in _WORD.findall(needle)}

            def matches(text: str) -> bool:
                return bool(words) and words <= {w.lower() for w in _WORD.findall(text)}

        found = [r for r in _records(s) if matches(r.text)]
        # The subject as written anywhere else (briefs, flag reasons, runs):
        # every spelling of it met in the records and briefs is scrubbed too.
        scrubbed: list[str] = []
        if subject is not None:
            texts = [r.text for r in found]
            for b in _pages(s.list_briefs):
                texts += [b.summary, *b.promote_hints, *b.completed_intents, *b.noise]
            scrubbed = sorted({m.group(0) for t in texts for m in pattern.finditer(t)})
        result = ForgetAbout(
            store=s.name,
            subject=subject,
            query=query,
            dry_run=dry_run,
            found=found,
            scrubbed=scrubbed,
        )
        if dry_run or not (found or scrubbed):
            return result
        ids = {
            tier: [r.id for r in found if r.tier == tier]
            for tier in ("short", "near", "long", "journal")
        }
        with _locked(s):
            for loop_id in ids["near"]:
                s.delete_loop(loop_id)  # the purge below rewrites the files after it
            flags = [f.id for f in s.list_flags("pending") if f.fact_id in set(ids["long"])]
            s.purge(
                facts=ids["long"],
                short=ids["short"],
                journal=ids["journal"],
                values=scrubbed,
                flags=flags,
            )
        return result


class _locked:
    """The store's consolidation lock, for a purge; 409 while a run holds it."""

    def __init__(self, s: Store) -> None:
        self.s = s

    def __enter__(self) -> None:
        if not self.s.try_lock_consolidation():
            raise Conflict(f"a consolidation run for store '{self.s.name}' is in progress")

    def __exit__(self, *exc: object) -> None:
        self.s.unlock_consolidation()
