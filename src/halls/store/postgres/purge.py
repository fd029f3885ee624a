"""The PostgreSQL store's purge: the one true deletion.

The rows go in one transaction (every other copy of a purged value too,
and earlier run records are scrubbed of it); then ``VACUUM FULL`` rewrites
the tables, so the deleted tuples do not linger in their files until the
space is reused. It rewrites each table whole and locks it while it does,
for every store of the database: a purge is rare and deliberate. What
PostgreSQL keeps beyond the tables (WAL segments until recycled, base
backups, replicas' copies) is the deployment's to manage; docs/scaling.md
says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from halls.store.postgres import rows
from halls.store.postgres.db import Database
from halls.store.postgres.rows import Conn

_PURGED = "[purged]"
# Every table a purge may have deleted from or rewritten text in.
TABLES = (
    "short",
    "near",
    "long",
    "journal",
    "docs",
    "edges",
    "briefs",
    "forget_flags",
    "run_actions",
    "deleted_rows",
)
_STUB = (
    "CASE WHEN {c} IS NULL THEN NULL ELSE "
    "json_build_object('id', ({c})::json ->> 'id', 'purged', true)::text END"
)
_SCRUB = (
    f"UPDATE halls.run_actions SET before = {_STUB.format(c='before')}, "
    f"after = {_STUB.format(c='after')}, undo = NULL"
)


class Purger:
    def __init__(self, db: Database, store: int) -> None:
        self._db = db
        self._store = store

    def purge(
        self,
        facts: Sequence[str],
        short: Sequence[str],
        journal: Sequence[str],
        values: Sequence[str],
        flags: Sequence[str],
    ) -> None:
        with self._db.tx(self._store) as conn:
            self._purge_rows(conn, list(facts), list(short), list(journal), list(values))
            conn.execute(
                "UPDATE halls.forget_flags SET status = 'done' WHERE store = %s AND id = ANY(%s)",
                (self._store, list(flags)),
            )
        with self._db.read() as conn:  # autocommit: VACUUM runs outside a transaction
            conn.execute(f"VACUUM FULL {', '.join(f'halls.{t}' for t in TABLES)}")

    def _purge_rows(
        self, conn: Conn, facts: list[str], short: list[str], journal: list[str], values: list[str]
    ) -> None:
        store = self._store
        for v in values:
            # Every other copy of the value goes too: the same SSN in another
            # entry, loop or fact is the same secret.
            for table, col, into in (
                ("short", "content", short),
                ("journal", "content", journal),
                ("long", "content", facts),
                ("near", "intent", None),
            ):
                ids = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT id FROM halls.{table} WHERE store = %s AND strpos({col}, %s) > 0",
                        (store, v),
                    )
                ]
                if into is None:
                    rows.delete_rows(conn, store, "near", ids)
                else:
                    into += [i for i in ids if i not in into]
            for col in ("summary", "promote_hints", "completed_intents", "noise"):
                conn.execute(
                    f"UPDATE halls.briefs SET {col} = replace({col}, %s, %s) WHERE store = %s",
                    (v, _PURGED, store),
                )
            conn.execute(
                "UPDATE halls.forget_flags SET reason = replace(reason, %s, %s) WHERE store = %s",
                (v, _PURGED, store),
            )
        for table, ids in (("long", facts), ("short", short), ("journal", journal)):
            rows.delete_rows(conn, store, table, ids)
        gone = [*facts, *short, *journal]
        # Earlier run records must not keep what the purge removes.
        conn.execute(
            f"{_SCRUB} WHERE store = %s AND (target_id = ANY(%s) "
            "OR (after::json ->> 'id') = ANY(%s))",
            (store, gone, gone),
        )
        for v in values:
            conn.execute(
                f"{_SCRUB}, reason = replace(reason, %(v)s, %(p)s), "
                "engine_note = replace(engine_note, %(v)s, %(p)s) "
                "WHERE store = %(s)s AND (strpos(COALESCE(before, ''), %(v)s) > 0 "
                "OR strpos(COALESCE(after, ''), %(v)s) > 0 "
                "OR strpos(COALESCE(undo, ''), %(v)s) > 0 "
                "OR strpos(reason, %(v)s) > 0 OR strpos(COALESCE(engine_note, ''), %(v)s) > 0)",
                {"v": v, "p": _PURGED, "s": store},
            )
