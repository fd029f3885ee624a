"""Domain values: the records of each tier, search hits, and their inputs.

These are plain pydantic models so that every adapter serialises them the
same way (times as ISO-8601 UTC). They carry no behaviour beyond parsing.

One concept over 500 lines: the vocabulary every layer shares (ids, records,
hits, runs). Split, each adapter would import the same handful of modules
together, and the ids' patterns would sit apart from the records they check.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, get_args, overload

import numpy as np
from pydantic import BaseModel, Field, computed_field

from halls.errors import InvalidInput
from halls.redact import redaction_count
from halls.storable import check_text

# Every enumeration of the domain has its one source here: a Literal for the
# types, and the tuple of its values (``get_args``) for validation, HTTP
# schemas, CLI choices and MCP tool parameters.
Tier = Literal["short", "near", "long", "journal"]
SearchTier = Literal["short", "near", "long"]
SEARCH_TIERS: tuple[str, ...] = get_args(SearchTier)
# What a search may be asked for: the searchable tiers, and the journal on
# request only (never by default: its raw turns would crowd out what was kept).
RecallTier = Literal["short", "near", "long", "journal"]
RECALL_TIERS: tuple[str, ...] = get_args(RecallTier)
# Who may see a journal event in search results: everyone (full), a redacted
# line only (summary), or nobody (private: the journal and its export only).
Visibility = Literal["full", "summary", "private"]
VISIBILITIES: tuple[str, ...] = get_args(Visibility)
TriggerType = Literal["time", "topic", "session", "manual"]
TRIGGER_TYPES: tuple[str, ...] = get_args(TriggerType)
LoopStatus = Literal["open", "done", "cancelled", "expired"]
LOOP_STATUSES: tuple[str, ...] = get_args(LoopStatus)
# What kind of knowledge a fact is (halls.consolidate.category), in the order
# a small context budget takes them: what changes how an agent acts first.
Category = Literal["decision", "preference", "procedure", "plan", "person", "fact"]
CATEGORIES: tuple[str, ...] = get_args(Category)
# retired: decayed below the consolidator's threshold; kept as history, out of search.
FactStatus = Literal["active", "superseded", "demoted", "retired"]
FACT_STATUSES: tuple[str, ...] = get_args(FactStatus)
# How an import settles a record whose id the store already holds.
OnConflict = Literal["keep-existing", "keep-imported", "keep-newer"]
ON_CONFLICT: tuple[str, ...] = get_args(OnConflict)
# "full": fused BM25 and dense with conversation context; "fused": without
# context; "bm25" or "dense": one search alone.
Retriever = Literal["full", "fused", "bm25", "dense"]
RETRIEVERS: tuple[str, ...] = get_args(Retriever)

# How much a memory matters, as its writer says (halls.importance maps each
# level to a number in [0, 1]).
ImportanceLevel = Literal["low", "normal", "high", "critical"]
IMPORTANCE_LEVELS: tuple[str, ...] = get_args(ImportanceLevel)

# A work scope (a feature, a bug, a phase: halls.scopes) is open until it is
# marked done, left idle or left for another scope; then closed (cold).
ScopeStatus = Literal["open", "closed"]
SCOPE_STATUSES: tuple[str, ...] = get_args(ScopeStatus)
ScopeEnd = Literal["done", "idle", "switched"]
# A scope's name: what a hook makes of a project and a branch ("web/fix-login")
# fits; no spaces, so that it reads as one word in a block and on a command line.
SCOPE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:#-]{0,127}$"

# Id prefixes tell the tier at a glance and let a bad id be refused early.
ID_PREFIX = {"short": "s", "near": "n", "long": "l", "journal": "j", "brief": "b", "flag": "f"}
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# \Z, not $: "$" also matches before a trailing newline.
ID_RE = re.compile(r"^(?P<prefix>[snljbf])_[0-9A-HJKMNP-TV-Z]{26}\Z")

MAX_CONTENT_CHARS = 32768
MAX_LIST = 1000
# No listing is ever that long; beyond it an offset only risks overflowing
# a 64-bit database integer.
MAX_OFFSET = 10**9
# For schemas (OpenAPI, MCP): what check_id and the store registry accept.
# In JSON Schema (ECMA) regexes "$" is the very end, so it is safe there.
STORE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"


def id_pattern(kind: str) -> str:
    """The pattern of a well-formed id of ``kind`` (see ``check_id``; "run": a run id)."""
    prefix = "r" if kind == "run" else ID_PREFIX[kind]
    return rf"^{prefix}_[0-9A-HJKMNP-TV-Z]{{26}}$"


class _IdClock:
    """ULID-style ids: 48-bit milliseconds + 80 random bits, monotonic per process.

    Sortable by creation time; within one millisecond the random part is
    incremented so that ids made in a batch keep their input order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def new(self, prefix: str) -> str:
        with self._lock:
            ms = int(time.time() * 1000)
            if ms <= self._last_ms:
                ms = self._last_ms
                rand = self._last_rand + 1
            else:
                rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom for increments
            self._last_ms, self._last_rand = ms, rand
        value = (ms << 80) | (rand & ((1 << 80) - 1))
        chars = []
        for _ in range(26):
            chars.append(_CROCKFORD[value & 31])
            value >>= 5
        return f"{prefix}_{''.join(reversed(chars))}"


_ids = _IdClock()


def new_id(kind: str) -> str:
    return _ids.new(ID_PREFIX[kind])


def check_id(value: str, kind: str) -> str:
    """Refuse an id that is not a well-formed id of this kind."""
    m = ID_RE.match(value) if isinstance(value, str) else None
    if not m or m.group("prefix") != ID_PREFIX[kind]:
        raise InvalidInput(f"'{str(value)[:80]}' is not a valid {kind} id")
    return value


def check_page(limit: int, offset: int) -> tuple[int, int]:
    """Refuse a listing page outside 1..MAX_LIST items or before the start."""
    if not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIST}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}")
    return limit, offset


# Unix seconds as text: the digits a JSON number would have (no sign, no
# leading zero, no exponent, ASCII only), up to 11 before the point. float()
# alone would also take " 5", "+5", "-0", "1_000", "1e9" or Arabic-Indic digits.
UNIX_SECONDS_PATTERN = r"^(0|[1-9][0-9]{0,10})(\.[0-9]+)?$"
_UNIX_SECONDS = re.compile(UNIX_SECONDS_PATTERN)
# The last second of 9999 (the OpenAPI maximum): later is not a datetime.
MAX_UNIX_SECONDS = 253402300799


def parse_time(value: Any, field: str = "time") -> float | None:
    """Accept ISO-8601 (naive means UTC) or unix seconds; return unix seconds.

    ``None`` is no time. Anything else must be one, exactly as documented
    (docs/http-api.md, Conventions): an empty or padded string is refused,
    not read as "none" or as a number.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, bool):
        raise InvalidInput(f"{field} must be ISO-8601 or unix seconds")
    elif isinstance(value, int | float):
        if not (0 <= float(value) <= MAX_UNIX_SECONDS):
            raise InvalidInput(f"{field} is out of range")
        return float(value) + 0.0  # -0.0 is 0.0
    elif isinstance(value, str):
        if _UNIX_SECONDS.fullmatch(value):
            return parse_time(float(value), field)
        # ISO-8601 is ASCII: fromisoformat would read other scripts' digits.
        if not value.isascii() or value != value.strip() or not value[:1].isdigit():
            raise InvalidInput(f"{field} must be ISO-8601 or unix seconds")
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{field} must be ISO-8601 or unix seconds") from None
    else:
        raise InvalidInput(f"{field} must be ISO-8601 or unix seconds")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    ts = dt.timestamp()
    # An offset can push year 1 or 9999 outside what datetime can hold in UTC,
    # which would fail later, on the way out, as a server error.
    if not (-62135596800 <= ts < MAX_UNIX_SECONDS + 1):
        raise InvalidInput(f"{field} is out of range")
    return ts


@overload
def to_datetime(ts: float) -> datetime: ...
@overload
def to_datetime(ts: None) -> None: ...
@overload
def to_datetime(ts: float | None) -> datetime | None: ...


def to_datetime(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


# Blank means only these: the whitespace of JSON Schema's (ECMA-262) \s, so that
# a text the published schema accepts (pattern \S) is never refused as blank.
# Python's str.strip() would also strip the separators U+001C..U+001F.
_BLANK = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def check_content(content: str, field: str = "content") -> str:
    if not isinstance(content, str) or not content.strip(_BLANK):
        raise InvalidInput(f"{field} must not be empty")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"{field} is longer than {MAX_CONTENT_CHARS} characters")
    return check_text(content, field)


class Record(BaseModel):
    id: str
    topic: str | None = None
    # The work scope it was written for (halls.scopes); None: none, never cold.
    scope: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    occurred_at: datetime


class ShortEntry(Record):
    tier: Literal["short"] = "short"
    content: str
    source: str | None = None
    pinned: bool = False
    expires_at: datetime | None = None
    # In [0, 1] (halls.importance); None: unset, ranked and aged as 0.5.
    importance: float | None = Field(default=None, ge=0, le=1)

    redactions = redaction_count("content", "topic", "source", "metadata")


class OpenLoop(Record):
    tier: Literal["near"] = "near"
    intent: str
    trigger_type: TriggerType = "manual"
    trigger_value: str | None = None
    expires_at: datetime | None = None
    status: LoopStatus = "open"
    closed_at: datetime | None = None
    importance: float | None = Field(default=None, ge=0, le=1)

    @property
    def content(self) -> str:
        return self.intent

    redactions = redaction_count("intent", "topic", "trigger_value", "metadata")


class LongFact(Record):
    tier: Literal["long"] = "long"
    content: str
    category: str | None = None
    evidence_count: int = 1
    first_seen: datetime
    last_confirmed: datetime
    status: FactStatus = "active"
    # A pinned fact never decays (nor is retired).
    pinned: bool = False
    supersedes: str | None = None
    superseded_by: str | None = None
    derived_from: list[str] = Field(default_factory=list)
    # The highest importance of the entries it was promoted from.
    importance: float | None = Field(default=None, ge=0, le=1)


class JournalEvent(Record):
    tier: Literal["journal"] = "journal"
    content: str
    role: str | None = None
    session_id: str | None = None
    # Counted on append (content and metadata) and stored: the journal is append-only.
    redactions: int = 0
    visibility: Visibility = "full"


class Brief(BaseModel):
    id: str
    summary: str
    promote_hints: list[str] = Field(default_factory=list)
    completed_intents: list[str] = Field(default_factory=list)
    # Texts or topics the consolidator must never promote ("small talk").
    noise: list[str] = Field(default_factory=list)
    created_at: datetime

    redactions = redaction_count("summary", "promote_hints", "completed_intents", "noise")


class Erased(BaseModel):
    """A record that ``forget_about`` found (and, unless a dry run, purged)."""

    id: str
    tier: Literal["short", "near", "long", "journal"]
    text: str


class ForgetAbout(BaseModel):
    """What "delete everything you know about X" found, and whether it is gone."""

    store: str
    subject: str | None = None
    query: str | None = None
    dry_run: bool
    found: list[Erased]
    # Copies of the subject in briefs, flag reasons and run records, replaced by "[purged]".
    scrubbed: list[str] = Field(default_factory=list)


class ForgetFlag(BaseModel):
    id: str
    fact_id: str
    reason: str
    status: Literal["pending", "done"] = "pending"
    created_at: datetime
    # Who flagged (the token's id; "cli"; None on an open server or in a
    # library call), and whether they may delete for good: only an admin's
    # flag purges; a writer's flag that would purge demotes instead.
    flagged_by: str | None = None
    admin: bool = False
    redactions = redaction_count("reason")


class Source(BaseModel):
    """A record a long-term fact hit was distilled from (a ``derived_from`` edge).

    ``score`` is the source's own fused relevance to the query, in [0, 1]
    (the figure a hit's ``score_detail["relevance"]`` gives), not a ranking
    score: a fact's sources are shown best first by it (``halls.recall.sources``).
    """

    id: str
    tier: str
    content: str
    occurred_at: datetime
    metadata: dict[str, Any]
    score: float


class Hit(BaseModel):
    """One search result: the record's shared fields plus why it ranked."""

    id: str
    tier: str
    content: str
    topic: str | None
    metadata: dict[str, Any]
    occurred_at: datetime
    created_at: datetime
    score: float
    # The estimated probability, in [0, 1], that the search found a memory
    # relevant to the query (halls.recall.relevance): one figure per search,
    # from its best raw scores. Unlike the score it can say that none is.
    # None when the model cannot judge the search (the bm25 retriever, or an
    # embedder other than the one it was fitted for): then nothing is filtered.
    relevance: float | None
    score_detail: dict[str, float | int | str | None]
    # The memory's importance (halls.importance), None when unset.
    importance: float | None = Field(default=None, ge=0, le=1)
    scope: str | None = None
    # A long-term fact's evidence: the records it derives from that are still
    # stored, at most halls.recall.sources.MAX_SOURCES, those that match the
    # query best first. Empty for every other tier.
    sources: list[Source] = Field(default_factory=list)
    # The store the hit came from: a search may read several (halls.service.shared).
    store: str | None = None


class DueLoop(BaseModel):
    """An open loop that is due now, and why: recall shows it beside the hits."""

    id: str
    intent: str
    topic: str | None
    trigger_type: TriggerType
    trigger_value: str | None
    reason: str
    store: str | None = None


class Recall(BaseModel):
    """What a search answers: the ranked hits, and the open loops due for this query."""

    results: list[Hit]
    due: list[DueLoop] = Field(default_factory=list)


class NewShort(BaseModel):
    """What a caller gives to remember one short-term entry."""

    content: str
    topic: str | None = None
    source: str | None = None
    pinned: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: Any = None
    # A number in [0, 1] or a level name; checked by halls.importance.
    importance: Any = None
    # Checked by halls.scopes (SCOPE_PATTERN), so that every adapter refuses alike.
    scope: Any = None


class NewJournal(BaseModel):
    content: str
    role: str | None = None
    session_id: str | None = None
    scope: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: Any = None
    # Checked by the service (one of VISIBILITIES), so that every adapter refuses alike.
    visibility: Any = "full"


class SearchFilter(BaseModel):
    """Which records a search may return (applied by the store)."""

    tiers: tuple[str, ...] = SEARCH_TIERS
    topic: str | None = None
    # Only long-term facts of this category (other tiers have none).
    category: str | None = None
    since: float | None = None
    until: float | None = None
    include_superseded: bool = False


class Scope(BaseModel):
    """A work scope and where it stands (halls.scopes).

    Turns are counted per store: each write of short-term entries, an open
    loop or journal events is one. ``last_turn`` is the last that wrote for
    the scope; ``elsewhere`` how many since then wrote for other scopes.
    """

    name: str
    status: ScopeStatus = "open"
    opened_at: datetime
    closed_at: datetime | None = None
    closed_because: ScopeEnd | None = None
    # The turns that wrote for it, and the last of them.
    turns: int = 1
    last_turn: int
    elsewhere: int = 0


class Scopes(BaseModel):
    """The scopes of a store, and its turn count (what ``last_turn`` is measured against)."""

    turn: int
    scopes: list[Scope]


Record.model_rebuild()


# -- what the store's primitive searches return ----------------------------------
# Named tuples: a search builds several hundred of these, and a tuple is built
# in a third of the time of a frozen dataclass.


class Match(NamedTuple):
    """A primitive search result: which record, and the backend's raw score."""

    id: str
    tier: str
    score: float


class Written(NamedTuple):
    """A searchable record as written: its place in the write order, time and vector.

    ``seq`` is the store's write sequence: it increases with every record
    indexed and is never reused, so that records written one after another
    (the turns of one conversation) have neighbouring numbers. Every backend
    keeps one; it is not a row address.
    """

    id: str
    tier: str
    seq: int
    occurred_at: float
    vector: np.ndarray


@dataclass(frozen=True, slots=True)
class Retention:
    """How often and how lately a searchable record was used, opened by id (its reinforcement).

    A record nobody recalled yet has none; recall's strength then decays from
    when the record happened (a fact: when it was last confirmed).
    """

    access_count: int
    last_accessed: float


EdgeKind = Literal["derived_from", "supersedes"]


@dataclass(frozen=True, slots=True)
class Edge:
    """An association between two records, ``src -> dst``.

    ``derived_from``: a fact (src) was distilled from a short-term entry or a
    journal event (dst); a fact's ``derived_from`` list is read from these.
    ``supersedes``: a fact (src) replaced an older one (dst); read from the
    facts' ``supersedes`` links (stamped with the newer fact's creation),
    never added as an edge. ``mentions``: a record (src) names something
    (dst: ``e_`` + a hash of the name, ``halls.recall.entities``).
    ``co_recall``: two records (src < dst) were returned together at the top
    of a search. ``created_at`` is unix seconds from the service's
    clock, never the database's. An edge is identified by (src, dst, kind);
    its time is when it was first made.
    """

    src: str
    dst: str
    kind: str
    created_at: float

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.src, self.dst, self.kind)


# -- consolidation runs --------------------------------------------------------
# A run record is the reviewable (and revertible) account of one consolidation
# run. Its JSON shape is a contract with the viewer and with scripts:
#   {id, store, started_at, finished_at, engine, dry_run, status, counts: {promote: n, ...},
#    actions: [{id, kind, target_id, reason, inputs: [...ids], before, after, engine_note,
#               review}]}
# before/after are small snapshots of the changed record; what revert needs
# beyond them (a whole aged-out entry) is ``undo``, stored but never serialised.

ActionKind = Literal[
    "promote",
    "confirm",
    "supersede",
    "obsolete",
    "age_out",
    "expire",
    "complete",
    "purge",
    "demote",
    "decay",
    "retire",
]
ACTION_KINDS: tuple[str, ...] = get_args(ActionKind)
RunStatus = Literal["planned", "running", "done", "failed", "reverted"]
# How an attempt to consolidate ended, as counted for /metrics: "planned" is a
# dry run, "busy" another run held the store.
RunOutcome = Literal["done", "planned", "failed", "busy"]
RUN_OUTCOMES: tuple[str, ...] = get_args(RunOutcome)
RUN_ID_RE = re.compile(r"^r_[0-9A-HJKMNP-TV-Z]{26}$")


def new_run_id() -> str:
    return _ids.new("r")


def check_run_id(value: str) -> str:
    if not RUN_ID_RE.match(value or ""):
        raise InvalidInput(f"'{value[:80]}' is not a valid run id")
    return value


# A planned action's review: a dry run's plan is kept, and each action in it
# is approved or rejected before the plan is applied (halls.consolidate.review).
Review = Literal["pending", "approved", "rejected"]
REVIEWS: tuple[str, ...] = get_args(Review)


class Action(BaseModel):
    # The action's number in its run, from 1: stable, as a run's actions never reorder.
    id: int | None = None
    kind: ActionKind
    target_id: str
    reason: str
    inputs: list[str] = Field(default_factory=list)
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    engine_note: str | None = None
    undo: dict[str, Any] | None = Field(default=None, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def review(self) -> Review | None:
        """A planned action's review (None in an applied run); kept with its undo."""
        value = (self.undo or {}).get("review")
        return value if value in REVIEWS else None


class Run(BaseModel):
    id: str
    store: str
    started_at: datetime
    finished_at: datetime | None = None
    engine: str
    dry_run: bool = False
    status: RunStatus
    since: datetime | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    actions: list[Action] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    error: str | None = None
    reverted_at: datetime | None = None


def count_actions(actions: list[Action]) -> dict[str, int]:
    counts = dict.fromkeys(ACTION_KINDS, 0)
    for a in actions:
        counts[a.kind] += 1
    return counts
