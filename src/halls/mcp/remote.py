"""``RemoteBackend``: MCP tool calls proxied to a running halls server over its HTTP API
(``halls mcp --server-url``), so that one process owns the store while any number of
agents talk stdio. It returns the HTTP API's JSON shapes and raises ``HallsError``s,
as ``halls.mcp.backend.LocalBackend`` does (``Backend`` is the protocol of both).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from halls.client import HallsClient
from halls.errors import InvalidInput
from halls.mcp.files import reading as _reading
from halls.mcp.files import writing as _writing
from halls.mcp.files import written as _written

if TYPE_CHECKING:
    from halls.models import NewShort

JSON = dict[str, Any]


class RemoteBackend:
    """Tool calls proxied to a running halls server over its HTTP API."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0) -> None:
        self._http = HallsClient(base_url, token, timeout=timeout)
        self.base_url = self._http.base_url
        self._call = self._http.call

    def close(self) -> None:
        self._http.close()

    def remember(self, note: NewShort, *, store: str | None) -> JSON:
        # NewShort's fields are POST /short's: the body is the note as it is.
        return self._call("POST", "/short", store, note.model_dump(mode="json"))

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
        body = {
            "intent": intent,
            "trigger_type": trigger_type,
            "trigger_value": trigger_value,
            "topic": topic,
            "expires_at": expires_at,
        }
        return self._call("POST", "/near", store, body)

    def complete_loop(self, id: str, *, store: str | None) -> JSON:
        return self._call("POST", f"/near/{_segment(id)}/complete", store)

    def cancel_loop(self, id: str, *, store: str | None) -> JSON:
        return self._call("POST", f"/near/{_segment(id)}/cancel", store)

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
        body: JSON = {"query": query, "n_results": n_results, "tiers": tiers, "topic": topic}
        if min_relevance is not None:  # else the server's default threshold
            body["min_relevance"] = min_relevance
        if stores is not None:  # a server from before shared reads refuses the field
            body["stores"] = stores
        return self._call("POST", "/search", store, body)

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
        body: JSON = {"query": query, "project": project, "budget_tokens": budget_tokens}
        if format != "verbose":  # a server older than the terse notation still answers
            body["format"] = format
        if scope is not None:  # a server from before scopes refuses the field
            body["scope"] = scope
        if stores is not None:
            body["stores"] = stores
        return self._call("POST", "/context", store, body)

    def list_scopes(self, *, store: str | None, status: str | None, limit: int) -> JSON:
        return self._call("GET", "/scopes", store, status=status, limit=limit)

    def close_scope(self, name: str, *, store: str | None) -> JSON:
        return self._call("POST", "/scopes/close", store, {"name": name})

    def journal(self, events: list[JSON], *, store: str | None) -> list[str]:
        return self._call("POST", "/journal/batch", store, {"items": events})["ids"]

    def submit_brief(
        self,
        summary: str,
        *,
        store: str | None,
        promote_hints: list[str],
        completed_intents: list[str],
        noise: list[str] | None = None,
    ) -> JSON:
        body = {
            "summary": summary,
            "promote_hints": promote_hints,
            "completed_intents": completed_intents,
            "noise": noise or [],
        }
        return self._call("POST", "/brief", store, body)

    def flag_forget(self, id: str, reason: str, *, store: str | None) -> JSON:
        body = {"reason": reason}
        return self._call("POST", f"/long/{_segment(id)}/forget", store, body)

    def consolidate(self, *, store: str | None, dry_run: bool, wait: bool = True) -> JSON:
        return self._call("POST", "/consolidate/run", store, {"dry_run": dry_run, "wait": wait})

    def consolidation_job(self, id: str, *, store: str | None) -> JSON:
        return self._call("GET", f"/consolidate/jobs/{_segment(id)}", store)

    def consolidation_status(self, *, store: str | None) -> JSON:
        return self._call("GET", "/consolidate/status", store)

    def list_loops(self, *, store: str | None, status: str | None, limit: int) -> list[JSON]:
        return self._call("GET", "/near", store, status=status, limit=limit)

    def stats(self, *, store: str | None) -> JSON:
        return self._call("GET", "/stats", store)

    def get_record(self, id: str, *, store: str | None) -> JSON:
        tier = {"s_": "short", "n_": "near", "l_": "long"}.get(id[:2])
        if tier is None:
            raise InvalidInput(f"'{id[:80]}' is not the id of a memory, loop or fact")
        return self._call("GET", f"/{tier}/{_segment(id)}", store)

    def edit_short(self, id: str, changes: JSON, *, store: str | None) -> JSON:
        return self._call("PATCH", f"/short/{_segment(id)}", store, changes)

    def pin(self, id: str, pinned: bool, *, store: str | None) -> JSON:
        if id.startswith("l_"):
            verb = "pin" if pinned else "unpin"
            return self._call("POST", f"/long/{_segment(id)}/{verb}", store)
        return self.edit_short(id, {"pinned": pinned}, store=store)

    def list_records(self, tier: str, *, store: str | None, limit: int) -> list[JSON]:
        return self._call("GET", f"/{tier}", store, limit=limit)

    def list_runs(self, *, store: str | None, limit: int) -> list[JSON]:
        return self._call("GET", "/consolidate/runs", store, limit=limit)["runs"]

    def get_run(self, id: str, *, store: str | None) -> JSON:
        return self._call("GET", f"/consolidate/runs/{_segment(id)}", store)

    def review_run(
        self, id: str, *, approve: list[int], reject: list[int], store: str | None
    ) -> JSON:
        body = {"approve": approve, "reject": reject}
        return self._call("POST", f"/consolidate/runs/{_segment(id)}/review", store, body)

    def apply_run(self, id: str, *, store: str | None) -> JSON:
        return self._call("POST", f"/consolidate/runs/{_segment(id)}/apply", store)

    def revert_run(self, id: str, *, store: str | None) -> JSON:
        return self._call("POST", f"/consolidate/runs/{_segment(id)}/revert", store)

    def delete_record(self, id: str, *, store: str | None) -> None:
        tier = {"s_": "short", "n_": "near", "j_": "journal", "l_": "long"}.get(id[:2])
        if tier is None:
            raise InvalidInput(f"'{id[:80]}' is not the id of a memory, loop, fact or event")
        self._call("DELETE", f"/{tier}/{_segment(id)}", store)

    def delete_store(self, name: str) -> None:
        self._call("DELETE", f"/stores/{_segment(name)}", None)

    def audit(self, *, store: str | None, limit: int) -> list[JSON]:
        return self._call("GET", "/audit", store, limit=limit)["entries"]

    def forget_about(
        self, *, store: str | None, subject: str | None, query: str | None, dry_run: bool
    ) -> JSON:
        body: JSON = {k: v for k, v in {"subject": subject, "query": query}.items() if v}
        body["dry_run"] = dry_run
        return self._call("POST", "/forget-about", store, body)

    def export_store(
        self, path: str, *, store: str | None, passphrase: str | None, overwrite: bool
    ) -> JSON:
        body = {"passphrase": passphrase} if passphrase else None
        with _writing(path, overwrite) as out:
            self._http.download("/export", store, body, out)
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
        headers = {"X-Halls-Passphrase": passphrase} if passphrase else {}
        flags = {"overwrite": overwrite, "dry_run": dry_run, "reembed": reembed}
        with open(_reading(path), "rb") as source:
            return self._http.upload(
                "/import",
                store,
                source,
                headers,
                on_conflict=on_conflict,
                **{k: str(v).lower() for k, v in flags.items()},
            )

    def backup_store(self, path: str, *, store: str | None, overwrite: bool) -> JSON:
        with _writing(path, overwrite) as out:
            self._http.download("/backup", store, None, out)
        return {"path": path, "bytes": Path(path).expanduser().stat().st_size}


def _segment(id: str) -> str:
    """An id as one URL path segment: a slash in a bad id must not reach another route."""
    return quote(id, safe="")
