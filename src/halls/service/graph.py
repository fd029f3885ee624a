"""The association graph's upkeep that no single write does: linking a store's older memories.

Entries are written with their ``mentions`` edges and facts get theirs in
the run that makes them, but a store written before the graph existed (or
with an older name extractor) has none. ``link_names`` gives every short-term
entry and long-term fact the edges of the names it mentions, stamped with
the record's own creation time, once per store and extractor version
(``NAMES_VERSION`` in the store's meta); ``Stores`` calls it when it first
opens a store for search or write. Adding an edge already there changes
nothing, so two processes doing it at once do no harm.
"""

from __future__ import annotations

from collections.abc import Iterator

from halls.recall.entities import mentions
from halls.store import changes as ch
from halls.store.base import Store

NAMES_KEY = "graph_names"
# Bump when halls.recall.entities reads names differently: stores relink.
NAMES_VERSION = "1"
_PAGE = 1000


def up_to_date(s: Store) -> bool:
    return s.get_meta(NAMES_KEY) == NAMES_VERSION


def link_names(s: Store) -> int:
    """Write the ``mentions`` edges of every entry and fact of ``s``; how many."""
    written = 0
    for page in _pages(s):
        edges = tuple(e for record_id, text, at in page for e in mentions(record_id, text, at))
        if edges:
            s.apply_changes([ch.AddEdges(edges)], None)
            written += len(edges)
    s.set_meta(NAMES_KEY, NAMES_VERSION)
    return written


def _pages(s: Store) -> Iterator[list[tuple[str, str, float]]]:
    """(id, text, created) of every entry, then every fact, a page at a time."""
    offset = 0
    while entries := s.list_short(_PAGE, offset):
        yield [(e.id, e.content, e.created_at.timestamp()) for e in entries]
        offset += len(entries)
    offset = 0
    while facts := s.list_facts(None, _PAGE, offset):
        yield [(f.id, f.content, f.created_at.timestamp()) for f in facts]
        offset += len(facts)
