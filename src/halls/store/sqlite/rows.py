"""Rows <-> records for the SQLite store: each statement that writes a record
is spelled once here, and every part of the store (records, consolidation,
purge) goes through it.

The edges table is the one truth about a fact's sources: ``LongFact.
derived_from`` is not a column but read from the fact's ``derived_from``
edges (``FACTS``), in the order they were made. Supersession goes the other
way: a fact's ``supersedes`` column is the truth, and ``edges_of`` reads
``supersedes`` edges from it, so neither can drift from a copy. Kept the other way round (a
JSON column beside the edges), revert and age-out had to keep two copies in
step and did not; an edge table also answers "what came from this entry?"
with an index, which a JSON column cannot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from halls.errors import InvalidInput
from halls.models import Edge, LongFact, OpenLoop, ShortEntry
from halls.store import rowmap
from halls.store.sqlite.db import blob, chunks, marks, ts

# A fact row with its sources, in one statement: the search path reads facts
# through this too, so the sources cost no extra query. Sources come oldest
# first, ties in the order they were written (the cluster's order); an
# export lists edges in that order, so an import writes them back in it.
FACTS = (
    "SELECT l.*, (SELECT json_group_array(dst) FROM (SELECT e.dst FROM edges e "
    "WHERE e.src = l.id AND e.kind = 'derived_from' ORDER BY e.created_at, e.rowid)) "
    "AS derived_from FROM long l"
)

TIER_TABLE = {"s": "short", "n": "near", "l": "long"}


def matrix(rows: Sequence[sqlite3.Row]) -> np.ndarray:
    """The ``vec`` column of ``rows`` as one float32 matrix."""
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    joined = b"".join(r["vec"] for r in rows)
    return np.frombuffer(joined, dtype=np.float32).reshape(len(rows), -1).copy()


# -- writing --


def index_doc(
    db: sqlite3.Connection,
    item: ShortEntry | OpenLoop | LongFact,
    text: str,
    active: bool,
    vector: np.ndarray,
) -> None:
    """The record's search row (filters, vector) and its full-text row."""
    cur = db.execute(
        "INSERT INTO docs(item_id, tier, topic, occurred_at, active, vec) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (item.id, item.tier, item.topic, ts(item.occurred_at), int(active), blob(vector)),
    )
    db.execute("INSERT INTO docs_fts(rowid, content) VALUES (?, ?)", (cur.lastrowid, text))


def set_active(db: sqlite3.Connection, item_id: str, active: bool, topic: Any) -> None:
    db.execute(
        "UPDATE docs SET active = ?, topic = ? WHERE item_id = ?", (int(active), topic, item_id)
    )


def insert_short(
    db: sqlite3.Connection,
    entry: ShortEntry,
    vector: np.ndarray,
    consolidated_into: str | None = None,
) -> None:
    db.execute(
        f"INSERT INTO short({rowmap.SHORT_COLUMNS}) VALUES ({marks(12)})",
        rowmap.short_values(entry, consolidated_into),
    )
    index_doc(db, entry, entry.content, True, vector)  # folded entries stay findable


def insert_fact(db: sqlite3.Connection, fact: LongFact, vector: np.ndarray) -> None:
    """The fact, its search rows, and its sources as edges stamped with its creation."""
    db.execute(
        f"INSERT INTO long({rowmap.FACT_COLUMNS}) VALUES ({marks(16)})", rowmap.fact_values(fact)
    )
    index_doc(db, fact, fact.content, rowmap.fact_searchable(fact), vector)
    when = fact.created_at.timestamp()
    add_edges(db, [Edge(fact.id, s, "derived_from", when) for s in fact.derived_from])


def update_fact(db: sqlite3.Connection, fact: LongFact) -> None:
    """Overwrite a fact's mutable fields; not its sources (those are edges)."""
    db.execute(
        f"UPDATE long SET {rowmap.FACT_UPDATE.format(p='?')} WHERE id = ?",
        rowmap.fact_update_values(fact),
    )
    set_active(db, fact.id, rowmap.fact_searchable(fact), fact.topic)


def delete_rows(db: sqlite3.Connection, table: str, ids: Sequence[str]) -> int:
    """Delete records of one table with their search rows and every edge touching them."""
    gone = 0
    for chunk in chunks(ids):
        q = marks(chunk)
        gone += db.execute(f"DELETE FROM {table} WHERE id IN ({q})", chunk).rowcount
        if table != "journal":
            db.execute(f"DELETE FROM docs WHERE item_id IN ({q})", chunk)
        db.execute(f"DELETE FROM edges WHERE src IN ({q}) OR dst IN ({q})", (*chunk, *chunk))
        if table == "long":
            # The supersedes edges of a deleted fact are its neighbours' links.
            db.execute(f"UPDATE long SET supersedes = NULL WHERE supersedes IN ({q})", chunk)
            db.execute(f"UPDATE long SET superseded_by = NULL WHERE superseded_by IN ({q})", chunk)
    return gone


# -- edges --


def add_edges(db: sqlite3.Connection, edges: Iterable[Edge]) -> None:
    rows = [(e.src, e.dst, e.kind, e.created_at) for e in edges]
    if any(r[2] == "supersedes" for r in rows):
        raise InvalidInput("supersedes edges are the facts' supersedes links: set those")
    db.executemany(
        "INSERT OR IGNORE INTO edges(src, dst, kind, created_at) VALUES (?, ?, ?, ?)", rows
    )


def remove_edges(db: sqlite3.Connection, edges: Iterable[Edge]) -> None:
    db.executemany(
        "DELETE FROM edges WHERE src = ? AND dst = ? AND kind = ?", [e.key for e in edges]
    )


# One leg per (node, kind, side), each cut at limit + 1 rows by its index
# (the primary key for src, edges_dst (dst, kind) for dst): a node with
# 10,000 edges costs limit + 1 rows, not 10,000, and an over-full node's rows
# never become Edges (building them cost more than reading them). A join on
# a correlated "rowid IN (... LIMIT n)" was 3x slower. SQLite allows 500
# legs per compound select.
_LEG = (
    "SELECT {n}, * FROM "
    "(SELECT src, dst, kind, created_at FROM edges WHERE {side} = ? AND kind = ? LIMIT ?)"
)
_MAX_LEGS = 400


def adjacent(
    db: sqlite3.Connection, ids: Sequence[str], kinds: Sequence[str], limit: int
) -> list[Edge]:
    """The edges of each (id, kind) that has at most ``limit``; see ``Store.adjacent``."""
    if "supersedes" in kinds:
        raise InvalidInput("supersedes links are read through edges(), not adjacent()")
    if not ids or not kinds or limit <= 0:
        return []
    legs = [
        (node, kind, side)
        for node in dict.fromkeys(ids)
        for kind in dict.fromkeys(kinds)
        for side in ("src", "dst")
    ]
    per: dict[tuple[str, str], list[tuple[str, str, str, float]]] = {}
    cur = db.cursor()
    cur.row_factory = None  # plain tuples: a search reads a few hundred of these
    for start in range(0, len(legs), _MAX_LEGS):
        chunk = legs[start : start + _MAX_LEGS]
        sql = " UNION ALL ".join(_LEG.format(n=n, side=leg[2]) for n, leg in enumerate(chunk))
        args = [a for node, kind, _ in chunk for a in (node, kind, limit + 1)]
        for n, src, dst, kind, at in cur.execute(sql, args):
            per.setdefault((chunk[n][0], kind), []).append((src, dst, kind, at))
    seen: set[tuple[str, str, str]] = set()
    out = []
    for found in per.values():
        if len(found) > limit:
            continue
        for src, dst, kind, at in found:
            if (src, dst, kind) not in seen:
                seen.add((src, dst, kind))
                out.append(Edge(src, dst, kind, float(at)))
    return out


def edges_of(db: sqlite3.Connection, ids: Sequence[str], kinds: Sequence[str] | None) -> list[Edge]:
    out: dict[tuple[str, str, str], tuple[float, int, Edge]] = {}
    kind_sql = "" if kinds is None else f" AND kind IN ({marks(kinds)})"
    for chunk in chunks(ids):
        q = marks(chunk)
        # A supersedes edge is made when the newer fact is: its created_at.
        rows = db.execute(
            "SELECT src, dst, kind, created_at, n FROM ("
            "SELECT src, dst, kind, created_at, rowid AS n FROM edges "
            "UNION ALL SELECT id, supersedes, 'supersedes', created_at, 0 FROM long "
            "WHERE supersedes IS NOT NULL) "
            f"WHERE (src IN ({q}) OR dst IN ({q})){kind_sql} ORDER BY created_at, n",
            (*chunk, *chunk, *(kinds or ())),
        )
        for r in rows:
            edge = Edge(r[0], r[1], r[2], float(r[3]))
            out.setdefault(edge.key, (edge.created_at, int(r[4]), edge))
    # Edges made in one instant keep the order they were written in (a fact's
    # sources in its cluster's order): an archive writes them back that way.
    return [e for _, _, e in sorted(out.values(), key=lambda t: (t[0], t[1], t[2].key))]
