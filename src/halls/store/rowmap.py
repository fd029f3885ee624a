"""Rows <-> records, for every SQL backend: one mapping, spelled once.

A row is anything indexable by column name (``sqlite3.Row``, a psycopg
dict row). Both backends keep the same columns with the same meaning:
times as unix seconds, metadata and lists as JSON text (so a record reads
back byte for byte as it was written, whatever the backend), and a fact's
``derived_from`` as a JSON array its query builds from the fact's edges.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from halls.errors import DamagedRecord
from halls.models import (
    Action,
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    Run,
    Scope,
    ShortEntry,
    to_datetime,
)
from halls.storable import readable

log = logging.getLogger("halls.store")

Row = Mapping[str, Any]
T = TypeVar("T")


def ts(value: Any) -> float | None:
    return None if value is None else value.timestamp()


def dumps_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def loads(text: str) -> Any:
    # Most records carry no metadata: skip the JSON parser for that (a
    # search converts a hundred records).
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


def loads_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def metadata_of(row: Row) -> dict[str, Any]:
    """A record's metadata, or ``DamagedRecord`` if it cannot be served.

    Writes are checked (``halls.storable``), but a store may hold metadata
    written before they were: a lone surrogate, or nesting deeper than a
    serializer recurses. Refusing the one record keeps its store readable.
    """
    text = row["metadata"]
    if text == "{}":
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise DamagedRecord.of(row["id"]) from None
    if not isinstance(value, dict) or not readable(value):
        raise DamagedRecord.of(row["id"])
    return value


def readable_rows(rows: Iterable[Row], convert: Callable[[Row], T]) -> tuple[list[T], list[int]]:
    """The records of ``rows`` and the positions they came from, damaged records skipped."""
    records: list[T] = []
    kept: list[int] = []
    for n, row in enumerate(rows):
        try:
            records.append(convert(row))
        except DamagedRecord as err:
            log.warning("skipped %s: it cannot be served; delete it", err.id)
            continue
        kept.append(n)
    return records, kept


def each(rows: Iterable[Row], convert: Callable[[Row], T]) -> list[T]:
    """The records of ``rows``, damaged records skipped (logged)."""
    return readable_rows(rows, convert)[0]


def fact_searchable(fact: LongFact) -> bool:
    """Active and demoted facts are searched by default; superseded and retired are history."""
    return fact.status in ("active", "demoted")


# -- reading --


def short_of(row: Row) -> ShortEntry:
    return ShortEntry(
        id=row["id"],
        content=row["content"],
        topic=row["topic"],
        source=row["source"],
        pinned=bool(row["pinned"]),
        metadata=metadata_of(row),
        created_at=to_datetime(row["created_at"]),
        occurred_at=to_datetime(row["occurred_at"]),
        expires_at=to_datetime(row["expires_at"]),
        importance=row["importance"],
        scope=row["scope"],
    )


def loop_of(row: Row) -> OpenLoop:
    return OpenLoop(
        id=row["id"],
        intent=row["intent"],
        topic=row["topic"],
        trigger_type=row["trigger_type"],
        trigger_value=row["trigger_value"],
        expires_at=to_datetime(row["expires_at"]),
        status=row["status"],
        closed_at=to_datetime(row["closed_at"]),
        importance=row["importance"],
        scope=row["scope"],
        metadata=metadata_of(row),
        created_at=to_datetime(row["created_at"]),
        occurred_at=to_datetime(row["occurred_at"]),
    )


def fact_of(row: Row) -> LongFact:
    """A fact from a row that carries ``derived_from`` (a JSON array of its sources)."""
    return LongFact(
        id=row["id"],
        content=row["content"],
        topic=row["topic"],
        category=row["category"],
        evidence_count=row["evidence_count"],
        first_seen=to_datetime(row["first_seen"]),
        last_confirmed=to_datetime(row["last_confirmed"]),
        status=row["status"],
        pinned=bool(row["pinned"]),
        supersedes=row["supersedes"],
        superseded_by=row["superseded_by"],
        derived_from=loads(row["derived_from"]),
        importance=row["importance"],
        scope=row["scope"],
        metadata=metadata_of(row),
        created_at=to_datetime(row["created_at"]),
        occurred_at=to_datetime(row["occurred_at"]),
    )


def journal_of(r: Row) -> JournalEvent:
    return JournalEvent(
        id=r["id"],
        content=r["content"],
        role=r["role"],
        session_id=r["session_id"],
        redactions=r["redactions"],
        visibility=r["visibility"],
        topic=r["topic"],
        scope=r["scope"],
        metadata=metadata_of(r),
        created_at=to_datetime(r["created_at"]),
        occurred_at=to_datetime(r["occurred_at"]),
    )


def brief_of(r: Row) -> Brief:
    return Brief(
        id=r["id"],
        summary=r["summary"],
        promote_hints=json.loads(r["promote_hints"]),
        completed_intents=json.loads(r["completed_intents"]),
        noise=json.loads(r["noise"]),
        created_at=to_datetime(r["created_at"]),
    )


def flag_of(r: Row) -> ForgetFlag:
    return ForgetFlag(
        id=r["id"],
        fact_id=r["fact_id"],
        reason=r["reason"],
        status=r["status"],
        created_at=to_datetime(r["created_at"]),
        flagged_by=r["flagged_by"],
        admin=bool(r["admin"]),
    )


def action_of(a: Row) -> Action:
    return Action(
        id=a["seq"] + 1,
        kind=a["kind"],
        target_id=a["target_id"],
        reason=a["reason"],
        inputs=json.loads(a["inputs"]),
        before=loads_or_none(a["before"]),
        after=loads_or_none(a["after"]),
        engine_note=a["engine_note"],
        undo=loads_or_none(a["undo"]),
    )


def run_of(r: Row, store: str, actions: Sequence[Row]) -> Run:
    return Run(
        id=r["id"],
        store=store,
        started_at=to_datetime(r["started_at"]),
        finished_at=to_datetime(r["finished_at"]),
        engine=r["engine"],
        # Only a dry run's plan is kept as "planned" (until it is applied).
        dry_run=r["status"] == "planned",
        status=r["status"],
        since=to_datetime(r["since"]),
        counts=json.loads(r["counts"]),
        notes=json.loads(r["notes"]),
        error=r["error"],
        reverted_at=to_datetime(r["reverted_at"]),
        actions=[action_of(a) for a in actions],
    )


# -- writing: the values of each insert, in the column order of its statement --

SHORT_COLUMNS = (
    "id, content, topic, source, pinned, metadata, created_at, occurred_at, expires_at, "
    "consolidated_into, importance, scope"
)


def short_values(entry: ShortEntry, consolidated_into: str | None) -> tuple[Any, ...]:
    return (
        entry.id,
        entry.content,
        entry.topic,
        entry.source,
        entry.pinned,
        json.dumps(entry.metadata),
        ts(entry.created_at),
        ts(entry.occurred_at),
        ts(entry.expires_at),
        consolidated_into,
        entry.importance,
        entry.scope,
    )


LOOP_COLUMNS = (
    "id, intent, topic, trigger_type, trigger_value, expires_at, status, closed_at, metadata, "
    "created_at, occurred_at, importance, scope"
)


def loop_values(loop: OpenLoop) -> tuple[Any, ...]:
    return (
        loop.id,
        loop.intent,
        loop.topic,
        loop.trigger_type,
        loop.trigger_value,
        ts(loop.expires_at),
        loop.status,
        ts(loop.closed_at),
        json.dumps(loop.metadata),
        ts(loop.created_at),
        ts(loop.occurred_at),
        loop.importance,
        loop.scope,
    )


FACT_COLUMNS = (
    "id, content, topic, category, evidence_count, first_seen, last_confirmed, status, "
    "pinned, supersedes, superseded_by, metadata, created_at, occurred_at, importance, scope"
)


def fact_values(fact: LongFact) -> tuple[Any, ...]:
    return (
        fact.id,
        fact.content,
        fact.topic,
        fact.category,
        fact.evidence_count,
        ts(fact.first_seen),
        ts(fact.last_confirmed),
        fact.status,
        fact.pinned,
        fact.supersedes,
        fact.superseded_by,
        json.dumps(fact.metadata),
        ts(fact.created_at),
        ts(fact.occurred_at),
        fact.importance,
        fact.scope,
    )


# The mutable fields update_fact overwrites, then the id.
FACT_UPDATE = (
    "content = {p}, topic = {p}, category = {p}, evidence_count = {p}, last_confirmed = {p}, "
    "status = {p}, pinned = {p}, supersedes = {p}, superseded_by = {p}, metadata = {p}, "
    "importance = {p}, scope = {p}"
)


def fact_update_values(fact: LongFact) -> tuple[Any, ...]:
    return (
        fact.content,
        fact.topic,
        fact.category,
        fact.evidence_count,
        ts(fact.last_confirmed),
        fact.status,
        fact.pinned,
        fact.supersedes,
        fact.superseded_by,
        json.dumps(fact.metadata),
        fact.importance,
        fact.scope,
        fact.id,
    )


JOURNAL_COLUMNS = (
    "id, content, role, session_id, redactions, topic, metadata, created_at, occurred_at, "
    "visibility, scope"
)


def journal_values(e: JournalEvent) -> tuple[Any, ...]:
    return (
        e.id,
        e.content,
        e.role,
        e.session_id,
        e.redactions,
        e.topic,
        json.dumps(e.metadata),
        ts(e.created_at),
        ts(e.occurred_at),
        e.visibility,
        e.scope,
    )


BRIEF_COLUMNS = "id, summary, promote_hints, completed_intents, created_at, noise"


def brief_values(brief: Brief) -> tuple[Any, ...]:
    return (
        brief.id,
        brief.summary,
        json.dumps(brief.promote_hints),
        json.dumps(brief.completed_intents),
        ts(brief.created_at),
        json.dumps(brief.noise),
    )


FLAG_COLUMNS = "id, fact_id, reason, status, created_at, flagged_by, admin"


def flag_values(flag: ForgetFlag) -> tuple[Any, ...]:
    return (
        flag.id,
        flag.fact_id,
        flag.reason,
        flag.status,
        ts(flag.created_at),
        flag.flagged_by,
        flag.admin,
    )


RUN_COLUMNS = (
    "id, started_at, finished_at, engine, status, since, counts, notes, error, reverted_at"
)
# What saving a run again overwrites (an upsert's SET list; both dialects say EXCLUDED).
# started_at too: an applied plan starts when it is applied (run order is by it).
RUN_UPSERT = (
    "started_at = excluded.started_at, finished_at = excluded.finished_at, "
    "status = excluded.status, counts = excluded.counts, notes = excluded.notes, "
    "error = excluded.error, reverted_at = excluded.reverted_at"
)


def run_values(run: Run) -> tuple[Any, ...]:
    return (
        run.id,
        ts(run.started_at),
        ts(run.finished_at),
        run.engine,
        run.status,
        ts(run.since),
        json.dumps(run.counts),
        json.dumps(run.notes),
        run.error,
        ts(run.reverted_at),
    )


ACTION_COLUMNS = "run_id, seq, kind, target_id, reason, inputs, before, after, engine_note, undo"


def action_values(run: Run) -> list[tuple[Any, ...]]:
    return [
        (
            run.id,
            n,
            a.kind,
            a.target_id,
            a.reason,
            json.dumps(a.inputs),
            dumps_or_none(a.before),
            dumps_or_none(a.after),
            a.engine_note,
            dumps_or_none(a.undo),
        )
        for n, a in enumerate(run.actions)
    ]


SCOPE_COLUMNS = "name, status, opened_at, closed_at, closed_because, turns, last_turn, elsewhere"
# What writing a scope again overwrites (an upsert's SET list; both dialects say EXCLUDED).
SCOPE_UPSERT = (
    "status = excluded.status, opened_at = excluded.opened_at, "
    "closed_at = excluded.closed_at, closed_because = excluded.closed_because, "
    "turns = excluded.turns, last_turn = excluded.last_turn, elsewhere = excluded.elsewhere"
)


def scope_values(scope: Scope) -> tuple[Any, ...]:
    return (
        scope.name,
        scope.status,
        ts(scope.opened_at),
        ts(scope.closed_at),
        scope.closed_because,
        scope.turns,
        scope.last_turn,
        scope.elsewhere,
    )


def scope_of(r: Row) -> Scope:
    return Scope(
        name=r["name"],
        status=r["status"],
        opened_at=to_datetime(r["opened_at"]),
        closed_at=to_datetime(r["closed_at"]),
        closed_because=r["closed_because"],
        turns=r["turns"],
        last_turn=r["last_turn"],
        elsewhere=r["elsewhere"],
    )


def marks(n: int, p: str = "?") -> str:
    """``n`` placeholders of one dialect, comma-separated."""
    return ",".join([p] * n)
