"""The seam under the MCP tools: where a tool call's work is done.

The tools are written once, against ``Backend``. Two implementations:

- ``LocalBackend`` calls the ``Memory`` service in this process (the
  streamable-HTTP endpoint mounted on the server, and ``halls mcp`` on a data
  directory);
- ``RemoteBackend`` (``halls.mcp.remote``) calls a running server's HTTP API (``halls mcp
  --server-url``), so that one process owns the store while any number of
  agents talk stdio.

Both return the HTTP API's JSON shapes, and both raise ``HallsError``s, so a
tool cannot tell them apart. Methods are blocking; the tools run them in a
worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic_core import to_jsonable_python

from halls.client import error_from_wire
from halls.errors import InvalidInput
from halls.mcp.files import reading as _reading
from halls.mcp.files import writing as _writing
from halls.mcp.files import written as _written
from halls.models import NewJournal, NewShort

if TYPE_CHECKING:  # the service (store, indexes) loads only where a LocalBackend is built
    from halls.service import Memory

JSON = dict[str, Any]
__all__ = ["Backend", "LocalBackend", "RemoteBackend", "error_from_wire"]


class Backend(Protocol):
    def remember(self, note: NewShort, *, store: str | None) -> JSON: ...
    def add_loop(
        self,
        intent: str,
        *,
        store: str | None,
        trigger_type: str,
        trigger_value: str | None,
        topic: str | None,
        expires_at: str | None,
    ) -> JSON: ...
    def complete_loop(self, id: str, *, store: str | None) -> JSON: ...
    def cancel_loop(self, id: str, *, store: str | None) -> JSON: ...
    def search(
        self,
        query: str,
        *,
        store: str | None,
        n_results: int,
        tiers: list[str] | None,
        topic: str | None,
        min_relevance: float | None = None,
        stores: list[str] | None = None,
    ) -> JSON:
        """``{"results": [hits], "due": [loops due for this query]}``, as ``POST /search``."""
        ...

    def context(
        self,
        *,
        store: str | None,
        query: str | None,
        project: str | None,
        budget_tokens: int,
        format: str = "verbose",
        scope: str | None = None,
        stores: list[str] | None = None,
    ) -> JSON: ...
    def list_scopes(self, *, store: str | None, status: str | None, limit: int) -> JSON: ...
    def close_scope(self, name: str, *, store: str | None) -> JSON: ...
    def journal(self, events: list[JSON], *, store: str | None) -> list[str]: ...
    def submit_brief(
        self,
        summary: str,
        *,
        store: str | None,
        promote_hints: list[str],
        completed_intents: list[str],
        noise: list[str] | None = None,
    ) -> JSON: ...
    def flag_forget(self, id: str, reason: str, *, store: str | None) -> JSON: ...
    def consolidate(self, *, store: str | None, dry_run: bool, wait: bool = True) -> JSON:
        """The run record; ``wait`` False: the job that runs it, started."""
        ...

    def consolidation_job(self, id: str, *, store: str | None) -> JSON: ...
    def consolidation_status(self, *, store: str | None) -> JSON: ...
    def list_loops(self, *, store: str | None, status: str | None, limit: int) -> list[JSON]: ...
    def stats(self, *, store: str | None) -> JSON: ...
    def get_record(self, id: str, *, store: str | None) -> JSON: ...
    def edit_short(self, id: str, changes: JSON, *, store: str | None) -> JSON: ...
    def pin(self, id: str, pinned: bool, *, store: str | None) -> JSON: ...
    def list_records(self, tier: str, *, store: str | None, limit: int) -> list[JSON]: ...
    def list_runs(self, *, store: str | None, limit: int) -> list[JSON]: ...
    def get_run(self, id: str, *, store: str | None) -> JSON: ...
    def review_run(
        self, id: str, *, approve: list[int], reject: list[int], store: str | None
    ) -> JSON: ...
    def apply_run(self, id: str, *, store: str | None) -> JSON: ...
    def revert_run(self, id: str, *, store: str | None) -> JSON: ...
    def delete_record(self, id: str, *, store: str | None) -> None: ...
    def delete_store(self, name: str) -> None: ...
    def audit(self, *, store: str | None, limit: int) -> list[JSON]: ...
    def forget_about(
        self, *, store: str | None, subject: str | None, query: str | None, dry_run: bool
    ) -> JSON: ...
    def export_store(
        self, path: str, *, store: str | None, passphrase: str | None, overwrite: bool
    ) -> JSON: ...
    def import_store(
        self,
        path: str,
        *,
        store: str | None,
        passphrase: str | None,
        on_conflict: str,
        overwrite: bool,
        dry_run: bool,
        reembed: bool,
    ) -> JSON: ...
    def backup_store(self, path: str, *, store: str | None, overwrite: bool) -> JSON: ...


def _json(value: Any) -> Any:
    return to_jsonable_python(value)


class LocalBackend:
    """Tool calls served by the Memory service in this process."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def remember(self, note: NewShort, *, store: str | None) -> JSON:
        return _json(self.memory.remember_many([note], store=store)[0])

    def add_loop(
        self,
        intent: str,
        *,
        store: str | None,
        trigger_type: str,
        trigger_value: str | None,
        topic: str | None,
        expires_at: str | None,
    ) -> JSON:
        loop = self.memory.add_loop(
            intent,
            store=store,
            trigger_type=trigger_type,
            trigger_value=trigger_value,
            topic=topic,
            expires_at=expires_at,
        )
        return _json(loop)

    def complete_loop(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.complete_loop(id, store=store))

    def cancel_loop(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.cancel_loop(id, store=store))

    def search(
        self,
        query: str,
        *,
        store: str | None,
        n_results: int,
        tiers: list[str] | None,
        topic: str | None,
        min_relevance: float | None = None,
        stores: list[str] | None = None,
    ) -> JSON:
        # None: the service's default threshold.
        chosen = {} if min_relevance is None else {"min_relevance": min_relevance}
        found = self.memory.recall(
            query,
            store=store,
            stores=stores,
            n_results=n_results,
            tiers=tiers,
            topic=topic,
            **chosen,
        )
        return _json(found)

    def context(
        self,
        *,
        store: str | None,
        query: str | None,
        project: str | None,
        budget_tokens: int,
        format: str = "verbose",
        scope: str | None = None,
        stores: list[str] | None = None,
    ) -> JSON:
        block = self.memory.context(
            store=store,
            stores=stores,
            query=query,
            project=project,
            budget_tokens=budget_tokens,
            format=format,
            scope=scope,
        )
        return _json(block)

    def list_scopes(self, *, store: str | None, status: str | None, limit: int) -> JSON:
        return _json(self.memory.list_scopes(store=store, status=status, limit=limit))

    def close_scope(self, name: str, *, store: str | None) -> JSON:
        return _json(self.memory.close_scope(name, store=store))

    def journal(self, events: list[JSON], *, store: str | None) -> list[str]:
        written = self.memory.journal([NewJournal(**ev) for ev in events], store=store)
        return [ev.id for ev in written]

    def submit_brief(
        self,
        summary: str,
        *,
        store: str | None,
        promote_hints: list[str],
        completed_intents: list[str],
        noise: list[str] | None = None,
    ) -> JSON:
        brief = self.memory.submit_brief(
            summary,
            store=store,
            promote_hints=promote_hints,
            completed_intents=completed_intents,
            noise=noise or [],
        )
        return _json(brief)

    def flag_forget(self, id: str, reason: str, *, store: str | None) -> JSON:
        return _json(self.memory.flag_forget(id, reason, store=store))

    def consolidate(self, *, store: str | None, dry_run: bool, wait: bool = True) -> JSON:
        start = self.memory.consolidate if wait else self.memory.start_consolidation
        return _json(start(store=store, dry_run=dry_run))

    def consolidation_job(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.consolidation_job(id, store=store))

    def consolidation_status(self, *, store: str | None) -> JSON:
        return _json(self.memory.consolidation_status(store=store))

    def list_loops(self, *, store: str | None, status: str | None, limit: int) -> list[JSON]:
        return _json(self.memory.list_loops(store=store, status=status, limit=limit))

    def stats(self, *, store: str | None) -> JSON:
        return _json(self.memory.stats(store=store))

    def get_record(self, id: str, *, store: str | None) -> JSON:
        if id.startswith("l_"):
            fact, chain = self.memory.get_long(id, store=store)
            return {**_json(fact), "chain": _json(chain)}
        get: Callable[..., Any] | None = {
            "s_": self.memory.get_short,
            "n_": self.memory.get_loop,
        }.get(id[:2])
        if get is None:
            raise InvalidInput(f"'{id[:80]}' is not the id of a memory, loop or fact")
        return _json(get(id, store=store))

    def edit_short(self, id: str, changes: JSON, *, store: str | None) -> JSON:
        return _json(self.memory.edit_short(id, changes, store=store))

    def pin(self, id: str, pinned: bool, *, store: str | None) -> JSON:
        if id.startswith("l_"):
            return _json(self.memory.pin_fact(id, pinned, store=store))
        return self.edit_short(id, {"pinned": pinned}, store=store)

    def list_records(self, tier: str, *, store: str | None, limit: int) -> list[JSON]:
        if tier == "long":
            return _json(self.memory.list_long(store=store, limit=limit))
        if tier == "journal":
            return _json(self.memory.list_journal(store=store, limit=limit))
        return _json(self.memory.list_short(store=store, limit=limit))

    def list_runs(self, *, store: str | None, limit: int) -> list[JSON]:
        return _json(self.memory.list_runs(store=store, limit=limit))

    def get_run(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.get_run(id, store=store))

    def review_run(
        self, id: str, *, approve: list[int], reject: list[int], store: str | None
    ) -> JSON:
        return _json(self.memory.review_run(id, approve=approve, reject=reject, store=store))

    def apply_run(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.apply_run(id, store=store))

    def revert_run(self, id: str, *, store: str | None) -> JSON:
        return _json(self.memory.revert_run(id, store=store))

    def delete_record(self, id: str, *, store: str | None) -> None:
        delete = {
            "s_": self.memory.delete_short,
            "n_": self.memory.delete_loop,
            "j_": self.memory.delete_journal,
            "l_": self.memory.delete_fact,
        }.get(id[:2])
        if delete is None:
            raise InvalidInput(f"'{id[:80]}' is not the id of a memory, loop, fact or event")
        delete(id, store=store)

    def delete_store(self, name: str) -> None:
        self.memory.delete_store(name)

    def audit(self, *, store: str | None, limit: int) -> list[JSON]:
        return self.memory.audit_entries(store=store, limit=limit)

    def forget_about(
        self, *, store: str | None, subject: str | None, query: str | None, dry_run: bool
    ) -> JSON:
        found = self.memory.forget_about(store=store, subject=subject, query=query, dry_run=dry_run)
        return _json(found)

    def export_store(
        self, path: str, *, store: str | None, passphrase: str | None, overwrite: bool
    ) -> JSON:
        with _writing(path, overwrite) as out:
            self.memory.export_store(out, store=store, passphrase=passphrase)
        return _written(path, passphrase)

    def import_store(
        self,
        path: str,
        *,
        store: str | None,
        passphrase: str | None,
        on_conflict: str,
        overwrite: bool,
        dry_run: bool,
        reembed: bool,
    ) -> JSON:
        report = self.memory.import_store(
            _reading(path),
            store=store,
            passphrase=passphrase,
            on_conflict=on_conflict,
            overwrite=overwrite,
            dry_run=dry_run,
            reembed=reembed,
        )
        return report.as_dict()

    def backup_store(self, path: str, *, store: str | None, overwrite: bool) -> JSON:
        target = Path(path).expanduser()
        size = self.memory.backup_store(target, store=store, overwrite=overwrite)
        return {"path": path, "bytes": size}


# The proxying implementation lives in its own module; named here as before.
from halls.mcp.remote import RemoteBackend  # noqa: E402

__all__ = ["Backend", "LocalBackend", "RemoteBackend"]
