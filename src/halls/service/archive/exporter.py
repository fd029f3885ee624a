"""Export: a whole store, read through the ``Store`` protocol, as one archive.

Every record of every tier (with its history: superseded and retired facts,
closed loops), the journal, briefs, forget flags, run records (with what a
revert needs), the edges, each searchable record's vector and
reinforcement. Searchable records go in their write order, so that an
import gives them back the neighbours they had.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import IO, Any

from halls.models import Edge, Run, SearchFilter, to_datetime
from halls.service.archive.format import ArchiveWriter, EncryptingSink, encode_vector
from halls.service.archive.progress import Progress, Ticker
from halls.service.stores import FINGERPRINT_KEY
from halls.store.base import Store

_PAGE = 1000
# Records per read of their vectors.
_BATCH = 256
# Every searchable record, whatever its status: an archive keeps the history.
_EVERYTHING = SearchFilter(include_superseded=True)


def export(
    s: Store,
    out: IO[bytes],
    *,
    passphrase: str | None,
    progress: Progress | None,
    clock: Callable[[], float],
) -> dict[str, int]:
    """Write the whole store to ``out`` (encrypted when a passphrase is given).

    Returns how many records of each kind the archive holds. The archive
    is read from the live store a page at a time, not as one snapshot:
    writes landing meanwhile may or may not be in it (``backup`` is the
    consistent copy).
    """
    sink: Any = EncryptingSink(out, passphrase) if passphrase else out
    writer = ArchiveWriter(sink)
    # Ids first, to count and to order: searchable records go in their
    # write order (the sequence neighbours are counted on).
    short_ids = _ids(lambda lim, off: s.list_short(lim, off))
    loop_ids = _ids(lambda lim, off: s.list_loops(None, lim, off))
    fact_ids = _ids(lambda lim, off: s.list_facts(None, lim, off))
    ordered = _write_order(s, short_ids + loop_ids + fact_ids)
    run_ids = _ids(lambda lim, off: s.list_runs(lim, off))
    journal = s.journal_since(None)
    briefs = s.briefs_since(None)
    flags = s.list_flags(None)
    fp = s.get_meta(FINGERPRINT_KEY)
    counts = {
        "journal": len(journal),
        "short": len(short_ids),
        "near": len(loop_ids),
        "long": len(fact_ids),
        "brief": len(briefs),
        "flag": len(flags),
        "run": len(run_ids),
    }
    tick = Ticker(progress, sum(counts.values()))
    writer.header(
        {
            "store": s.name,
            "exported_at": to_datetime(clock()).isoformat(),
            "halls_version": _version(),
            "embedder": {"fingerprint": fp, "dim": _dim(s, ordered)},
            "counts": counts,
        }
    )
    for event in journal:
        writer.record("journal", {"record": event.model_dump(mode="json")})
    tick(len(journal))
    del journal
    into = _consolidated_into(s) if short_ids else {}
    for start in range(0, len(ordered), _BATCH):
        ids = ordered[start : start + _BATCH]
        records, vectors, kept = s.get_records(ids), s.vectors(ids), s.retention(ids)
        for i in ids:
            rec, vec = records.get(i), vectors.get(i)
            if rec is None or vec is None:  # deleted meanwhile
                continue
            tier = getattr(rec, "tier", "")
            fields: dict[str, Any] = {"record": rec.model_dump(mode="json")}
            fields["vector"] = encode_vector(vec)
            if tier == "short":
                fields["consolidated_into"] = into.get(i)
            if i in kept:
                r = kept[i]
                fields["retention"] = {
                    "access_count": r.access_count,
                    "last_accessed": r.last_accessed,
                }
            writer.record(tier, fields)
        tick(len(ids))
    seen: set[tuple[str, str, str]] = set()
    for start in range(0, len(ordered), _PAGE):
        for e in s.edges(ordered[start : start + _PAGE]):
            if e.kind != "supersedes" and e.key not in seen:
                seen.add(e.key)
                writer.record("edge", {"edge": {**_edge_dict(e)}})
    for brief in briefs:
        writer.record("brief", {"record": brief.model_dump(mode="json")})
    for flag in flags:
        writer.record("flag", {"record": flag.model_dump(mode="json")})
    tick(len(briefs) + len(flags))
    for run_id in run_ids:
        run = s.get_run(run_id)
        if run is not None:
            writer.record("run", {"record": _run_dict(run)})
    tick(len(run_ids))
    writer.footer()
    if isinstance(sink, EncryptingSink):
        sink.close()
    return dict(writer.counts)


def _ids(page: Callable[[int, int], list[Any]]) -> list[str]:
    out: dict[str, None] = {}
    offset = 0
    while True:
        found = page(_PAGE, offset)
        out.update((r.id, None) for r in found)
        if len(found) < _PAGE:
            return list(out)
        offset += _PAGE


def _write_order(s: Store, ids: list[str]) -> list[str]:
    placed: list[tuple[int, str]] = []
    for start in range(0, len(ids), _PAGE):
        found = s.neighbours(ids[start : start + _PAGE], 0, _EVERYTHING)
        placed += [(w.seq, w.id) for w in found]
    placed.sort()
    return [i for _, i in placed]


def _dim(s: Store, ordered: list[str]) -> int | None:
    """The vectors' dimension, read off a stored vector (None: nothing searchable)."""
    for start in range(0, len(ordered), _BATCH):
        for vector in s.vectors(ordered[start : start + _BATCH]).values():
            return len(vector)
    return None


def _consolidated_into(s: Store) -> dict[str, str]:
    entries, into, _ = s.short_for_consolidation()
    return {e.id: f for e, f in zip(entries, into, strict=True) if f is not None}


def _run_dict(run: Run) -> dict[str, Any]:
    """A run with each action's ``undo`` (never serialised elsewhere): what a revert needs."""
    out = run.model_dump(mode="json")
    for action, dumped in zip(run.actions, out["actions"], strict=True):
        dumped["undo"] = action.undo
    return out


def _edge_dict(e: Edge) -> dict[str, Any]:
    return {"src": e.src, "dst": e.dst, "kind": e.kind, "created_at": e.created_at}


def _version() -> str | None:
    try:
        return version("halls")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return None
