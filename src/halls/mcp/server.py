"""The MCP server: one FastMCP whose tools are thin calls into a ``Backend``.

Tool descriptions are product copy for a model: each says what the tool is
for and *when* to call it. Errors are translated here, at the edge: a
``HallsError`` or bad arguments become a tool error result (``isError``) with
a one-line message; anything unexpected is logged and reported without
details, never as a stack trace.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ContentBlock, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from halls import __version__
from halls.errors import HallsError
from halls.mcp.backend import JSON, Backend
from halls.models import MAX_CONTENT_CHARS, LoopStatus, OnConflict, SearchTier, TriggerType
from halls.service import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, Action, Grant, acting_as

log = logging.getLogger("halls.mcp")
T = TypeVar("T")

INSTRUCTIONS = """\
halls is your memory across sessions. Call `context` once when a session \
starts. Call `recall` before answering anything that may depend on earlier \
sessions: preferences, decisions, names, project facts. Call `remember` as \
soon as you learn something worth keeping, and `remember_for_later` when \
anyone promises a follow-up. Before the conversation ends or is compacted, \
call `submit_brief`."""

Store = Annotated[
    str | None,
    Field(
        description="Named store (one per user, agent or project, e.g. 'acme-web'); "
        "omit for the configured default store."
    ),
]
Text = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS)]
Topic = Annotated[
    str | None,
    Field(max_length=200, description="A short label to group and filter by, e.g. 'deploy'."),
]

# The tools that take a path on the server's machine.
FILE_TOOLS = frozenset({"export_store", "import_store", "backup_store"})

FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="A file path on the machine this MCP server runs on.",
    ),
]
Passphrase = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=1024,
        description="Encrypts (export) or unlocks (import) the archive; omit for a plain one.",
    ),
]

READ = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
ADD = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
SETTLE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
DESTROY = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)


class JournalItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: Text = Field(description="The event verbatim, e.g. one turn of the conversation.")
    role: str | None = Field(
        default=None, max_length=100, description="Who produced it: user, assistant, tool, ..."
    )
    session_id: str | None = Field(
        default=None, max_length=200, description="Groups the events of one conversation."
    )
    occurred_at: str | None = Field(
        default=None, description="When it happened, ISO-8601; default now."
    )


def _compact_hit(hit: JSON) -> JSON:
    keep = ("id", "tier", "content", "topic", "occurred_at", "score")
    return {k: hit.get(k) for k in keep}


def _compact_due(loop: JSON) -> JSON:
    keep = ("id", "intent", "reason")
    return {k: loop.get(k) for k in keep}


def _prose(doc: str) -> str:
    """A docstring as one paragraph: indentation and line breaks cost a model tokens."""
    return " ".join(inspect.cleandoc(doc).split())


def _describe(err: ValidationError) -> str:
    parts = []
    for item in err.errors()[:5]:
        where = ".".join(str(p) for p in item.get("loc", ()))
        parts.append(f"{where}: {item.get('msg', 'invalid value')}" if where else item["msg"])
    return "; ".join(parts)


class HallsMCP(FastMCP):  # type: ignore[type-arg]
    """FastMCP with halls' access check and error translation at the edge."""

    # What each tool needs of the caller's grant on its store (set by build_server).
    actions: dict[str, Action]
    default_store: str | None = None

    def _grant(self) -> Grant:
        """The grant the HTTP server resolved for this call; stdio is the local user's own."""
        context = self.get_context()
        try:
            request = context.request_context.request
        except ValueError:  # no request context: called in-process, outside a session
            request = None
        if not isinstance(request, Request):
            # stdio (`halls mcp`): the user who started it owns the data
            # directory. `--server-url` sends its token to a server that checks it.
            return Grant.everything("stdio")
        grant = request.scope.get("state", {}).get("grant")
        return grant if isinstance(grant, Grant) else Grant(id=None, stores=frozenset())

    def _check(self, name: str, arguments: dict[str, Any]) -> Grant:
        """The caller's grant, after checking it allows this call (else a tool error)."""
        grant = self._grant()
        action = self.actions.get(name)
        if action is None:
            return grant  # an unknown tool: the SDK answers it
        store = arguments.get("store") or self.default_store
        if store is not None and not isinstance(store, str):
            raise ToolError(f"invalid arguments for {name}: store must be a string")
        if store is None:
            if grant.stores is not None:
                raise ToolError("this token opens only some stores: name one with `store`")
            return grant
        try:
            grant.check(store, action)
        except HallsError as exc:
            raise ToolError(exc.message) from None
        if name in FILE_TOOLS and not grant.global_admin:
            # These read or write files on the server's own machine: only its
            # operator may, not the admin of one store (who has POST /export,
            # /import and /backup, which stream to and from the caller).
            raise ToolError(
                f"{name} uses files on the machine halls runs on: it needs an admin token "
                "of every store; use POST /export, /import or /backup instead"
            )
        return grant

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | JSON:
        grant = self._check(name, arguments)
        try:
            with acting_as(grant.id):
                return await super().call_tool(name, arguments)  # type: ignore[no-any-return]
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                message = f"invalid arguments for {name}: {_describe(cause)}"
            elif isinstance(cause, HallsError):
                message = cause.message
            elif cause is not None:
                log.error("tool %s failed", name, exc_info=cause)
                message = "internal error; see the halls log"
            else:
                message = str(exc)
            raise ToolError(message) from None


def build_server(
    backend: Backend,
    *,
    default_store: str | None = None,
    host: str = "127.0.0.1",
    path: str = "/mcp",
) -> HallsMCP:
    """The halls MCP server over ``backend``.

    ``default_store`` is used when a call names no store (``None``: the
    backend's own default). ``host`` decides the DNS-rebinding protection of
    the HTTP transport: on for loopback hosts, as the SDK does.
    """
    mcp = HallsMCP(
        name="halls",
        instructions=INSTRUCTIONS,
        host=host,
        streamable_http_path=path,
        # Stateless: every request stands alone, so any halls process behind
        # a load balancer can answer, and no session state leaks memory.
        stateless_http=True,
        json_response=True,
        log_level="WARNING",
    )
    # FastMCP has no version argument; without this, clients see the SDK's version.
    mcp._mcp_server.version = __version__
    mcp.actions = {}
    mcp.default_store = default_store

    def tool(
        annotations: ToolAnnotations, action: Action | None = None
    ) -> Callable[[Callable[..., Any]], Any]:
        def register(fn: Callable[..., Any]) -> Any:
            mcp.add_tool(fn, description=_prose(fn.__doc__ or ""), annotations=annotations)
            # Only reads are read-only; every other tool writes (or deletes: admin).
            mcp.actions[fn.__name__] = action or ("read" if annotations.readOnlyHint else "write")
            return fn

        return register

    async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        # Embedding and SQLite block; the event loop must keep serving.
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    def pick(store: str | None) -> str | None:
        return store or default_store

    @tool(ADD)
    async def remember(
        content: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="One self-contained statement, e.g. 'Chad prefers absolute "
                "paths in config files'.",
            ),
        ],
        topic: Topic = None,
        pinned: Annotated[
            bool, Field(description="Keep it in short-term memory until deleted.")
        ] = False,
        store: Store = None,
    ) -> JSON:
        """Save something worth knowing later: a preference, a decision and its reason, a fact
        about the project or the people in it, a correction ("no, we use tabs"). Call it as soon
        as you learn such a thing. Write one self-contained sentence that will make sense weeks
        from now without this conversation: name who and what, no "he" or "this". It goes to
        short-term memory, which ages out after about 8 days unless it recurs or matters, in
        which case consolidation files it into long-term memory. Never save passwords, keys or
        tokens. Returns the new entry with its id."""
        return await run(backend.remember, content, store=pick(store), topic=topic, pinned=pinned)

    @tool(ADD)
    async def remember_for_later(
        intent: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="What to bring up or do, e.g. 'Ask how the tax filing went'.",
            ),
        ],
        trigger_type: Annotated[
            TriggerType,
            Field(
                description="session: next session start; time: at trigger_value; topic: when "
                "the conversation touches trigger_value; manual: only when recalled."
            ),
        ] = "session",
        trigger_value: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="time: ISO-8601, e.g. '2026-12-01T09:00:00Z'; topic: the words "
                "that should bring it up, e.g. 'taxes'.",
            ),
        ] = None,
        topic: Topic = None,
        expires_at: Annotated[
            str | None, Field(description="ISO-8601; after this it is dropped unraised.")
        ] = None,
        store: Store = None,
    ) -> JSON:
        """Note an open loop: something to bring up or do later. Call it whenever the user or you
        promise a follow-up ("remind me to renew the cert on Dec 1", "let's revisit this next
        time"). Pick the trigger: session = raise it at the start of the next session; time = due
        at trigger_value; topic = raise it when the conversation touches trigger_value; manual =
        only when recalled. Due loops show up in `context`. When it is done, call
        complete_intent with its id. Returns the loop with its id."""
        return await run(
            backend.add_loop,
            intent,
            store=pick(store),
            trigger_type=trigger_type,
            trigger_value=trigger_value,
            topic=topic,
            expires_at=expires_at,
        )

    @tool(SETTLE)
    async def complete_intent(
        id: Annotated[str, Field(description="The open loop's id, e.g. 'n_01J...'.")],
        store: Store = None,
    ) -> JSON:
        """Close an open loop once its follow-up has happened: you raised it, or it was done.
        Call it right away, so the loop stops appearing in `context`. Find ids in `context`
        (in brackets) or with list_open_loops. Returns the closed loop."""
        return await run(backend.complete_loop, id, store=pick(store))

    @tool(SETTLE)
    async def cancel_intent(
        id: Annotated[str, Field(description="The open loop's id, e.g. 'n_01J...'.")],
        store: Store = None,
    ) -> JSON:
        """Drop an open loop that no longer applies: the user changed their mind, or the
        follow-up became pointless. It is never raised again. For a loop that was carried out,
        use complete_intent instead. Returns the cancelled loop."""
        return await run(backend.cancel_loop, id, store=pick(store))

    @tool(READ)
    async def recall(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="The question you need answered, e.g. 'how does Chad want paths "
                "written?'.",
            ),
        ],
        n_results: Annotated[
            int, Field(ge=1, le=100, description="How many hits, best first.")
        ] = 5,
        tiers: Annotated[
            list[SearchTier] | None,
            Field(
                description="Narrow the search: short = recent notes, near = open loops, long = "
                "consolidated facts. Default: all three."
            ),
        ] = None,
        topic: Annotated[str | None, Field(description="Only memories with this topic.")] = None,
        store: Store = None,
    ) -> JSON:
        """Search memory. Call it before answering anything that may depend on the past: the
        user's preferences, earlier decisions, names, project facts, what was said in a previous
        session. One query searches short-term notes, open loops and long-term facts at once, by
        words and by meaning; hits come best first, each with a score. Phrase the query as the
        question you need answered. No hits means halls knows nothing about it: say so rather
        than guess. `due` lists open loops due now (their time came, or the query touches their
        topic): act on them, then complete_intent or cancel_intent."""
        found = await run(
            backend.search, query, store=pick(store), n_results=n_results, tiers=tiers, topic=topic
        )
        return {
            "results": [_compact_hit(h) for h in found["results"]],
            "due": [_compact_due(d) for d in found.get("due", [])],
        }

    @tool(READ)
    async def context(
        query: Annotated[
            str | None,
            Field(
                max_length=MAX_CONTENT_CHARS,
                description="What the session is about, e.g. the user's first request; adds "
                "memories relevant to it.",
            ),
        ] = None,
        budget_tokens: Annotated[
            int,
            Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Upper bound on the block's size."),
        ] = DEFAULT_BUDGET,
        project: Annotated[
            str | None,
            Field(
                max_length=200,
                description="The project the session works on, e.g. the repository's name; "
                "its memories and topic loops come first.",
            ),
        ] = None,
        store: Store = None,
    ) -> JSON:
        """Get a compact memory briefing: open loops that are due now, memories relevant to
        `query`, and the most important long-term facts, deduplicated and within budget_tokens.
        Call it once at the start of a session or a new task (pass the user's first request as
        query when you have it), and again when the subject changes sharply. Read the text; act
        on due loops. Returns the text, the ids of the memories in it, and its token count."""
        return await run(
            backend.context,
            store=pick(store),
            query=query,
            project=project,
            budget_tokens=budget_tokens,
        )

    @tool(ADD)
    async def journal(
        events: Annotated[
            list[JournalItem],
            Field(min_length=1, max_length=1000, description="Events in the order they happened."),
        ],
        store: Store = None,
    ) -> JSON:
        """Append raw events to the journal, the verbatim record of what happened: turns of the
        conversation (role 'user' or 'assistant', one session_id per conversation), tool
        results, outcomes. Each consolidation run reads the last 8 days of it: the statements
        in the user's own turns (and events without a role) that recur on several days become
        long-term facts derived from those events; greetings, thanks and questions never do, and
        the assistant's and tools' events are not read for facts. `recall` does not search the
        journal. Secrets (API keys, tokens, passwords), e-mail addresses and phone numbers are
        redacted before anything is stored. Use it to keep a record of a conversation; for a
        single fact use `remember`. Returns the new event ids."""
        items = [e.model_dump(exclude_none=True) for e in events]
        return {"ids": await run(backend.journal, items, store=pick(store))}

    @tool(ADD)
    async def submit_brief(
        summary: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_CONTENT_CHARS,
                description="What was done and decided, in a few sentences.",
            ),
        ],
        promote_hints: Annotated[
            list[str],
            Field(
                max_length=1000,
                description="Short phrases naming memories that deserve long-term memory, e.g. "
                "'CI runner has 2 cores'.",
            ),
        ] = [],  # noqa: B006 - the SDK copies arguments per call; [] is the schema default
        completed_intents: Annotated[
            list[str],
            Field(max_length=1000, description="Ids or wording of open loops that were settled."),
        ] = [],  # noqa: B006 - as above
        noise: Annotated[
            list[str],
            Field(
                max_length=1000,
                description="Texts or topics that must never become long-term memory, e.g. "
                "'small talk'.",
            ),
        ] = [],  # noqa: B006 - as above
        store: Store = None,
    ) -> JSON:
        """Hand consolidation a brief when a session or task ends, or before the conversation
        is compacted: what was done and decided (the summary's statements are themselves a
        source of long-term facts once they recur), which memories deserve keeping
        (promote_hints), which open loops were settled (completed_intents), and what must never
        be kept (noise). Call it once per session or task, before you lose the conversation.
        Nothing changes immediately; the next consolidation run uses it. Returns the stored
        brief."""
        return await run(
            backend.submit_brief,
            summary,
            store=pick(store),
            promote_hints=promote_hints,
            completed_intents=completed_intents,
            noise=noise,
        )

    @tool(DESTROY)
    async def flag_forget(
        id: Annotated[str, Field(description="The long-term fact's id, e.g. 'l_01J...'.")],
        reason: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="Why, in the user's words, e.g. 'contains my phone number' or 'we "
                "moved off Postgres'.",
            ),
        ],
        store: Store = None,
    ) -> JSON:
        """Ask halls to forget a long-term fact that is wrong, outdated, or should never have
        been stored (personal data, a secret). Call it only when the user asks to forget or
        correct something, or when you find a secret in memory. It takes effect at the next
        consolidation run: personal data and secrets are purged for good; wrong or disputed
        facts are demoted and kept only as history. Returns the pending flag."""
        return await run(backend.flag_forget, id, reason, store=pick(store))

    @tool(DESTROY)
    async def consolidate(
        action: Annotated[
            Literal["status", "dry_run", "run"],
            Field(
                description="status: last run and what is pending; dry_run: what a run would "
                "do, changing nothing; run: do it now."
            ),
        ] = "status",
        store: Store = None,
    ) -> JSON:
        """Inspect, preview or run consolidation: the step that files recurring short-term
        memories into long-term facts, ages out stale ones, settles open loops and acts on
        forget flags (purging personal data for good). It runs by itself about every 20 hours,
        so use action=run only when the user asks for it, or right after flag_forget when
        something must go now. status and dry_run change nothing."""
        if action == "status":
            return await run(backend.consolidation_status, store=pick(store))
        return await run(backend.consolidate, store=pick(store), dry_run=action == "dry_run")

    @tool(READ)
    async def list_open_loops(
        status: Annotated[
            LoopStatus,
            Field(description="Which loops to list."),
        ] = "open",
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """List open loops (follow-ups noted with remember_for_later), newest first. Call it when
        the user asks what is pending or what you promised, or to find the id to pass to
        complete_intent."""
        loops = await run(backend.list_loops, store=pick(store), status=status, limit=limit)
        return {"loops": loops}

    @tool(READ)
    async def stats(store: Store = None) -> JSON:
        """Numbers about a store: entries per tier (short, near, long, journal), briefs and
        forget flags still waiting for a consolidation run, size on disk, and the embedding
        model. Call it to answer "how much do you remember?" or to check that memory works."""
        return await run(backend.stats, store=pick(store))

    @tool(DESTROY, "admin")
    async def forget_about(
        subject: Annotated[
            str | None,
            Field(
                min_length=2,
                max_length=1000,
                description="Text to find in every memory, any case, e.g. 'Ivanka' or a phone "
                "number.",
            ),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                min_length=2,
                max_length=1000,
                description="Instead of subject: words that must all appear in a memory.",
            ),
        ] = None,
        dry_run: Annotated[
            bool, Field(description="true: only list what would go. false: purge it all.")
        ] = True,
        store: Store = None,
    ) -> JSON:
        """Delete everything memory holds about someone or something, when the user asks
        for it ("forget everything about my ex", "delete my phone number"). Every tier is
        searched, the raw journal included. First call it with dry_run=true and show the user
        what was found; only after they confirm, call it again with dry_run=false: the purge
        is immediate and cannot be undone. Needs an admin token."""
        return await run(
            backend.forget_about, store=pick(store), subject=subject, query=query, dry_run=dry_run
        )

    @tool(DESTROY, "admin")
    async def delete_memory(
        id: Annotated[
            str,
            Field(
                description="The id: s_ (short-term), n_ (open loop), l_ (long-term fact) or "
                "j_ (journal event)."
            ),
        ],
        store: Store = None,
    ) -> JSON:
        """Delete one record for good, now, when the user asks to delete that exact thing. A
        long-term fact goes with the notes it was made from and any personal data in it; a
        journal event is purged from the files. Cannot be undone; needs an admin token. To
        correct a fact rather than erase it, use flag_forget."""
        await run(backend.delete_record, id, store=pick(store))
        return {"deleted": id}

    @tool(DESTROY, "admin")
    async def delete_store(
        store: Annotated[str, Field(description="The store to delete, with all it holds.")],
    ) -> JSON:
        """Delete a whole store and every file of it, for good. Only when the user asks to
        delete that store by name; cannot be undone; needs an admin token."""
        await run(backend.delete_store, store)
        return {"deleted": store}

    @tool(READ, "admin")
    async def audit(
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 50,
        store: Store = None,
    ) -> JSON:
        """Who changed what in a store, newest first: each write, deletion, purge and
        consolidation run with its time, the ids it touched and the id of the token that asked
        (never any content). Call it when the user asks what happened to their memory or who
        deleted something. Needs an admin token."""
        return {"entries": await run(backend.audit, store=pick(store), limit=limit)}

    # Export, import and backup hand over or replace a whole store: admin only.
    @tool(ADD, "admin")
    async def export_store(
        path: FilePath,
        passphrase: Passphrase = None,
        overwrite: Annotated[bool, Field(description="Replace the file if it exists.")] = False,
        store: Store = None,
    ) -> JSON:
        """Write a whole store to one archive file: every tier with its history, the journal,
        briefs, forget flags, consolidation runs, and each memory's vector. Encrypted
        (AES-256-GCM) when a passphrase is given. Call it only when the user asks to export or
        move their memory. Returns the path and the archive's size."""
        return await run(
            backend.export_store,
            path,
            store=pick(store),
            passphrase=passphrase,
            overwrite=overwrite,
        )

    @tool(DESTROY, "admin")
    async def import_store(
        path: FilePath,
        passphrase: Passphrase = None,
        on_conflict: Annotated[
            OnConflict,
            Field(description="For a record whose id the store already holds."),
        ] = "keep-existing",
        overwrite: Annotated[
            bool, Field(description="Allow importing into a store that already holds records.")
        ] = False,
        dry_run: Annotated[
            bool, Field(description="Check the archive and count; change nothing.")
        ] = False,
        reembed: Annotated[
            bool, Field(description="Embed the records again with this server's embedder.")
        ] = False,
        store: Store = None,
    ) -> JSON:
        """Import an archive written by export_store into a store. A damaged or altered archive,
        or a wrong passphrase, imports nothing and says why. Call it only when the user asks to
        restore or move memory; try dry_run first. Returns how many records were added,
        replaced and kept."""
        return await run(
            backend.import_store,
            path,
            store=pick(store),
            passphrase=passphrase,
            on_conflict=on_conflict,
            overwrite=overwrite,
            dry_run=dry_run,
            reembed=reembed,
        )

    @tool(ADD, "admin")
    async def backup_store(
        path: FilePath,
        overwrite: Annotated[bool, Field(description="Replace the file if it exists.")] = False,
        store: Store = None,
    ) -> JSON:
        """Copy a store's database file, consistent as of one instant, while halls keeps
        serving. Call it only when the user asks for a backup. Returns the path and size."""
        return await run(backend.backup_store, path, store=pick(store), overwrite=overwrite)

    return mcp
