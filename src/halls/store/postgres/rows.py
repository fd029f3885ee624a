"""Rows <-> records for the PostgreSQL store: each statement that writes a
record is spelled once here, for records, consolidation and purge alike.

The same truths as the SQLite store: a fact's sources are its
``derived_from`` edges (``FACTS`` reads them in the order they were made),
supersession is the facts' own ``supersedes`` column (``edges_of`` reads
``supersedes`` edges from it). Every statement names its store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import psycopg

from halls.errors import InvalidInput
from halls.models import Edge, LongFact, OpenLoop, ShortEntry
from halls.store import rowmap
from halls.store.postgres.db import take_seqs
from halls.store.rowmap import marks, ts

Conn = psycopg.Connection[Any]

# A fact row with its sources, in one statement. Sources come oldest first,
# ties in the order they were written, as on SQLite; an export lists edges
# in that order, so an import writes them back in it.
FACTS = (
    "SELECT l.*, COALESCE((SELECT json_agg(e.dst ORDER BY e.created_at, e.n)::text "
    "FROM halls.edges e WHERE e.store = l.store AND e.src = l.id "
    "AND e.kind = 'derived_from'), '[]') AS derived_from FROM halls.long l"
)

TIER_TABLE = {"s": "short", "n": "near", "l": "long"}
# Deletion-log entries kept per store; a mirror that last looked before the
# oldest one kept reloads instead.
_DELETED_KEPT = 100_000


def index_docs(
    conn: Conn,
    store: int,
    items: Sequence[tuple[ShortEntry | OpenLoop | LongFact, str, bool]],
    vectors: Sequence[np.ndarray],
) -> None:
    """The records' search rows: filters, text, vector, and the next seqs."""
    seqs = take_seqs(conn, store, len(items))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO halls.docs(store, seq, item_id, tier, topic, occurred_at, active, "
            "content, vec) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    store,
                    seq,
                    item.id,
                    item.tier,
                    item.topic,
                    ts(item.occurred_at),
                    active,
                    text,
                    np.asarray(vector, dtype=np.float32),
                )
                for seq, (item, text, active), vector in zip(seqs, items, vectors, strict=True)
            ],
        )


def set_active(conn: Conn, store: int, ids: Sequence[str], active: bool, topic: Any = ...) -> None:
    if topic is ...:
        conn.execute(
            "UPDATE halls.docs SET active = %s WHERE store = %s AND item_id = ANY(%s)",
            (active, store, list(ids)),
        )
    else:
        conn.execute(
            "UPDATE halls.docs SET active = %s, topic = %s WHERE store = %s AND item_id = ANY(%s)",
            (active, topic, store, list(ids)),
        )


def insert_short(
    conn: Conn,
    store: int,
    entries: Sequence[ShortEntry],
    vectors: Sequence[np.ndarray],
    consolidated_into: str | None = None,
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO halls.short(store, {rowmap.SHORT_COLUMNS}) VALUES ({marks(13, '%s')})",
            [(store, *rowmap.short_values(e, consolidated_into)) for e in entries],
        )
    # Folded entries stay findable too.
    index_docs(conn, store, [(e, e.content, True) for e in entries], vectors)


def insert_loop(conn: Conn, store: int, loop: OpenLoop, vector: np.ndarray) -> None:
    conn.execute(
        f"INSERT INTO halls.near(store, {rowmap.LOOP_COLUMNS}) VALUES ({marks(14, '%s')})",
        (store, *rowmap.loop_values(loop)),
    )
    index_docs(conn, store, [(loop, loop.intent, loop.status == "open")], [vector])


def insert_fact(conn: Conn, store: int, fact: LongFact, vector: np.ndarray) -> None:
    """The fact, its search row, and its sources as edges stamped with its creation."""
    conn.execute(
        f"INSERT INTO halls.long(store, {rowmap.FACT_COLUMNS}) VALUES ({marks(17, '%s')})",
        (store, *rowmap.fact_values(fact)),
    )
    index_docs(conn, store, [(fact, fact.content, rowmap.fact_searchable(fact))], [vector])
    when = fact.created_at.timestamp()
    add_edges(conn, store, [Edge(fact.id, s, "derived_from", when) for s in fact.derived_from])


def update_fact(conn: Conn, store: int, fact: LongFact) -> None:
    conn.execute(
        f"UPDATE halls.long SET {rowmap.FACT_UPDATE.format(p='%s')} WHERE store = %s AND id = %s",
        (*rowmap.fact_update_values(fact)[:-1], store, fact.id),
    )
    set_active(conn, store, [fact.id], rowmap.fact_searchable(fact), fact.topic)


def delete_rows(conn: Conn, store: int, table: str, ids: Sequence[str]) -> int:
    """Delete records of one table with their search rows and every edge touching them."""
    ids = list(ids)
    if not ids:
        return 0
    gone = conn.execute(
        f"DELETE FROM halls.{table} WHERE store = %s AND id = ANY(%s)", (store, ids)
    ).rowcount
    if table != "journal":
        seqs = [
            r[0]
            for r in conn.execute(
                "DELETE FROM halls.docs WHERE store = %s AND item_id = ANY(%s) RETURNING seq",
                (store, ids),
            )
        ]
        log_deleted(conn, store, seqs)
    conn.execute(
        "DELETE FROM halls.edges WHERE store = %s AND (src = ANY(%s) OR dst = ANY(%s))",
        (store, ids, ids),
    )
    if table == "long":
        # The supersedes edges of a deleted fact are its neighbours' links.
        for col in ("supersedes", "superseded_by"):
            conn.execute(
                f"UPDATE halls.long SET {col} = NULL WHERE store = %s AND {col} = ANY(%s)",
                (store, ids),
            )
    return gone


def log_deleted(conn: Conn, store: int, seqs: Sequence[int]) -> None:
    """Append deleted search rows to the store's deletion log (its row is locked)."""
    if not seqs:
        return
    last = conn.execute(
        "UPDATE halls.stores SET last_deleted = last_deleted + %s WHERE id = %s "
        "RETURNING last_deleted",
        (len(seqs), store),
    ).fetchone()
    assert last is not None
    first = int(last[0]) - len(seqs) + 1
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO halls.deleted_rows(store, seq, row) VALUES (%s, %s, %s)",
            [(store, first + i, s) for i, s in enumerate(sorted(seqs))],
        )
    conn.execute(
        "DELETE FROM halls.deleted_rows WHERE store = %s AND seq <= %s",
        (store, int(last[0]) - _DELETED_KEPT),
    )


# -- edges --


def add_edges(conn: Conn, store: int, edges: Iterable[Edge]) -> None:
    rows = [(store, e.src, e.dst, e.kind, e.created_at) for e in edges]
    if any(r[3] == "supersedes" for r in rows):
        raise InvalidInput("supersedes edges are the facts' supersedes links: set those")
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO halls.edges(store, src, dst, kind, created_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            rows,
        )


# One leg per side of an edge: the first ``limit + 1`` edges of each (node,
# kind), by an index either way (the primary key for src, edges_dst for dst).
_ADJACENT = " UNION ALL ".join(
    "SELECT l.node, l.kind, e.src, e.dst, e.created_at "
    "FROM unnest(%(nodes)s::text[], %(kinds)s::text[]) AS l(node, kind) "
    "CROSS JOIN LATERAL (SELECT src, dst, created_at FROM halls.edges "
    f"WHERE store = %(store)s AND {side} = l.node AND kind = l.kind LIMIT %(more)s) e"
    for side in ("src", "dst")
)


def adjacent(
    conn: Conn, store: int, ids: Sequence[str], kinds: Sequence[str], limit: int
) -> list[Edge]:
    """The edges of each (id, kind) that has at most ``limit``; see ``Store.adjacent``."""
    if "supersedes" in kinds:
        raise InvalidInput("supersedes links are read through edges(), not adjacent()")
    if not ids or not kinds or limit <= 0:
        return []
    legs = [(node, kind) for node in dict.fromkeys(ids) for kind in dict.fromkeys(kinds)]
    found = conn.execute(
        _ADJACENT,
        {
            "store": store,
            "nodes": [n for n, _ in legs],
            "kinds": [k for _, k in legs],
            "more": limit + 1,
        },
    )
    per: dict[tuple[str, str], list[tuple[str, str, str, float]]] = {}
    for node, kind, src, dst, at in found:
        per.setdefault((node, kind), []).append((src, dst, kind, at))
    seen: set[tuple[str, str, str]] = set()
    out = []
    for rows in per.values():
        if len(rows) > limit:
            continue  # an over-full node links nothing
        for src, dst, kind, at in rows:
            if (src, dst, kind) not in seen:
                seen.add((src, dst, kind))
                out.append(Edge(src, dst, kind, float(at)))
    return out


def remove_edges(conn: Conn, store: int, edges: Iterable[Edge]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "DELETE FROM halls.edges WHERE store = %s AND src = %s AND dst = %s AND kind = %s",
            [(store, *e.key) for e in edges],
        )


def edges_of(conn: Conn, store: int, ids: Sequence[str], kinds: Sequence[str] | None) -> list[Edge]:
    if not ids:
        return []
    kind_sql = "" if kinds is None else " AND kind = ANY(%(kinds)s)"
    # A supersedes edge is made when the newer fact is: its created_at.
    rows = conn.execute(
        "SELECT src, dst, kind, created_at FROM ("
        "SELECT src, dst, kind, created_at, n FROM halls.edges WHERE store = %(store)s "
        "UNION ALL SELECT id, supersedes, 'supersedes', created_at, 0 FROM halls.long "
        "WHERE store = %(store)s AND supersedes IS NOT NULL) e "
        f"WHERE (src = ANY(%(ids)s) OR dst = ANY(%(ids)s)){kind_sql} "
        "ORDER BY created_at, n, src, dst, kind",
        {"store": store, "ids": list(ids), "kinds": list(kinds or ())},
    )
    # Edges made in one instant keep the order they were written in, as on
    # SQLite (one query, so the first seen of each is in that order).
    out: dict[tuple[str, str, str], Edge] = {}
    for r in rows:
        edge = Edge(r[0], r[1], r[2], float(r[3]))
        out.setdefault(edge.key, edge)
    return list(out.values())
