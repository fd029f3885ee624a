"""Wire schemas: the exact request bodies of the HTTP API.

Responses are the domain models themselves (``halls.models``), so every
interface serialises a record the same way.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from halls.errors import InvalidInput
from halls.models import (
    MAX_CONTENT_CHARS,
    MAX_UNIX_SECONDS,
    RECALL_TIERS,
    SCOPE_PATTERN,
    STORE_NAME_PATTERN,
    TRIGGER_TYPES,
    UNIX_SECONDS_PATTERN,
    Category,
    ImportanceLevel,
    Retriever,
    Visibility,
)
from halls.service import DEFAULT_MIN_RELEVANCE, MAX_STORES
from halls.storable import check_strings

# The validation error type of a lone surrogate, answered 400 invalid_input.
INVALID_TEXT = "invalid_text"

# "\\S": blank text is refused too (documented; the service checks it, 400).
NOT_BLANK: dict[str, Any] = {"pattern": r"\S"}
Content = Field(min_length=1, max_length=MAX_CONTENT_CHARS, json_schema_extra=NOT_BLANK)
Phrases: Any = Field(
    default_factory=list,
    max_length=1000,
    json_schema_extra={"items": {"type": "string", "minLength": 1, **NOT_BLANK}},
)

# Several stores read at once (POST /search, POST /context). The names'
# pattern is documented; the service refuses a bad one with 400 invalid_store_name.
Stores = Annotated[
    list[str] | None,
    Field(
        min_length=1,
        max_length=MAX_STORES,
        description="Several stores to read at once, instead of ?store= (not both): e.g. "
        "your own and a shared one. Each must be open to the token; the hits are merged "
        "into one list (n_results over the whole list), each naming its store.",
        json_schema_extra={
            "anyOf": [
                {"type": "array", "items": {"type": "string", "pattern": STORE_NAME_PATTERN}},
                {"type": "null"},
            ]
        },
    ),
]

_SECONDS = re.compile(UNIX_SECONDS_PATTERN)


def _not_bool(value: Any) -> Any:
    # Lax float parsing would turn JSON true into 1.0, i.e. a time in 1970.
    if isinstance(value, bool):
        raise ValueError("must be ISO-8601 or unix seconds")
    # Unix seconds as text (the CLI sends them so) are plain digits, as the
    # schema says: not "1e9", "+5", " 5", "0005" or "1_000", which float()
    # would take.
    if isinstance(value, str) and not _SECONDS.fullmatch(value):
        try:
            float(value)
        except ValueError:
            return value  # an ISO time (or nonsense, which parse_time refuses)
        raise ValueError("must be ISO-8601 or unix seconds")
    return value


def _integer(value: Any) -> Any:
    # JSON has one number type: 5.0 is the integer 5 (JSON Schema agrees),
    # while "5" and true are not integers at all (strict models refuse them).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_integer)]

# A number in [0, 1] (an integer 0 or 1 too: strict floats take ints); NaN
# fails the bounds. Anything else is a 422 that changes nothing.
MinRelevance = Field(
    default=DEFAULT_MIN_RELEVANCE,
    ge=0.0,
    le=1.0,
    description="Return the hits only if their relevance (the estimated probability that the "
    "search found a memory relevant to the query) is at least this; 0 returns every hit.",
)


# How much a memory matters: a number in [0, 1] or a level (halls.importance
# maps low, normal, high, critical to 0.25, 0.5, 0.75, 1). Anything else is a
# 422 that changes nothing; null (the default) leaves it unset.
Importance = Annotated[
    Annotated[float, Field(ge=0.0, le=1.0)] | ImportanceLevel | None,
    Field(
        description="How much the memory matters: a number from 0 to 1, or low (0.25), "
        "normal (0.5), high (0.75), critical (1). Unset ranks and ages as normal."
    ),
]


# The work scope a write is for (halls.scopes); null: none. A name holding a
# secret or personal data is refused (400) rather than stored redacted.
ScopeName = Annotated[
    str | None,
    Field(
        pattern=SCOPE_PATTERN,
        description="The work scope (a feature, a bug, a phase) this is written for, e.g. "
        "web/fix-login. Each write is a turn: a scope opens on its first write and closes "
        "when marked done, left idle or left for other scopes.",
    ),
]


# As documented; parse_time is what decides (400 invalid_input otherwise).
_ISO_TIME: dict[str, Any] = {
    "type": "string",
    "format": "date-time",
    # Years 1970-9999: before 1970 is not a time halls stores.
    "pattern": "^(19[7-9][0-9]|[2-9][0-9]{3})-",
}
_TIME_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "number",
            "minimum": 0,
            "maximum": MAX_UNIX_SECONDS,
            "description": "unix seconds",
        },
        _ISO_TIME,
        {"type": "string", "pattern": UNIX_SECONDS_PATTERN, "description": "unix seconds"},
        {"type": "null"},
    ]
}
Time = Annotated[
    float | str | None,
    BeforeValidator(_not_bool),
    WithJsonSchema(_TIME_SCHEMA),
]


class _Body(BaseModel):
    # An unknown field is most often a typo ("contnet"): refuse it loudly.
    # Strict: 0 is not false, "5" is not 5; the body means what the schema says.
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: Any) -> Any:
        # JSON may escape a lone surrogate ("\udfff"); no store or response
        # can encode one. Refused first, wherever it is in the body (a 400,
        # as the service refuses it: see halls.http.errors).
        try:
            check_strings(data, "")
        except InvalidInput as exc:
            raise PydanticCustomError(INVALID_TEXT, "{message}", {"message": exc.message}) from None
        return data


class ShortIn(_Body):
    content: str = Content
    topic: str | None = Field(default=None, max_length=200)
    source: str | None = Field(default=None, max_length=200)
    pinned: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: Time = None
    importance: Importance = None
    scope: ScopeName = None


class ShortPatch(_Body):
    """The fields to change; those left out stay as they are (a null topic clears it)."""

    # Not nullable: the defaults only mark a field as absent (exclude_unset).
    content: str = Field(
        default=None,  # type: ignore[assignment]
        min_length=1,
        max_length=MAX_CONTENT_CHARS,
        json_schema_extra=NOT_BLANK,
    )
    topic: str | None = Field(default=None, max_length=200)
    pinned: bool = None  # type: ignore[assignment]
    metadata: dict[str, Any] = None  # type: ignore[assignment]
    # A null importance clears it (unset), as a null topic does.
    importance: Importance = None


class ShortBatchIn(_Body):
    items: list[ShortIn] = Field(min_length=1, max_length=1000)


class IdsOut(BaseModel):
    ids: list[str]


class NearIn(_Body):
    # What add_loop checks, stated for clients: a time trigger needs a time,
    # a topic trigger a trigger_value or a topic.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {
                        "properties": {"trigger_type": {"const": "time"}},
                        "required": ["trigger_type"],
                    },
                    "then": {
                        "required": ["trigger_value"],
                        "properties": {"trigger_value": _ISO_TIME},
                    },
                },
                {
                    "if": {
                        "properties": {"trigger_type": {"const": "topic"}},
                        "required": ["trigger_type"],
                    },
                    "then": {
                        "anyOf": [
                            {
                                "required": ["trigger_value"],
                                "properties": {"trigger_value": {"type": "string", "minLength": 1}},
                            },
                            {
                                "required": ["topic"],
                                "properties": {"topic": {"type": "string", "minLength": 1}},
                            },
                        ]
                    },
                },
            ]
        }
    )

    intent: str = Content
    topic: str | None = Field(default=None, max_length=200)
    trigger_type: str = Field(default="manual", json_schema_extra={"enum": list(TRIGGER_TYPES)})
    trigger_value: str | None = Field(default=None, max_length=1000)
    expires_at: Time = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: Importance = None
    scope: ScopeName = None


class JournalIn(_Body):
    content: str = Content
    role: str | None = Field(default=None, max_length=100)
    session_id: str | None = Field(default=None, max_length=200)
    occurred_at: Time = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Who sees the event in search results (docs/http-api.md); anything else is a 422.
    visibility: Visibility = "full"
    scope: ScopeName = None


class JournalBatchIn(_Body):
    items: list[JournalIn] = Field(min_length=1, max_length=1000)


class ForgetIn(_Body):
    reason: str = Field(min_length=1, max_length=2000, json_schema_extra=NOT_BLANK)


class BriefIn(_Body):
    summary: str = Content
    promote_hints: list[str] = Phrases
    completed_intents: list[str] = Phrases
    # Texts or topics the consolidator must never promote (small talk, scratch work).
    noise: list[str] = Phrases


class SearchIn(_Body):
    query: str = Content
    n_results: Integer = Field(default=5, ge=1, le=100)
    tiers: list[str] | None = Field(
        default=None,
        json_schema_extra={
            "anyOf": [{"type": "array", "items": {"enum": list(RECALL_TIERS)}}, {"type": "null"}]
        },
    )
    topic: str | None = None
    since: Time = None
    until: Time = None
    include_superseded: bool = False
    retriever: Retriever = "full"
    # False for an inspection or an evaluation: the best hits are not linked (co_recall).
    reinforce: bool = True
    # Only long-term facts of this category.
    category: Category | None = None
    min_relevance: float = MinRelevance
    stores: Stores = None


class StoreIn(_Body):
    # Documented; the service refuses a bad name with 400 invalid_store_name.
    name: str = Field(json_schema_extra={"pattern": STORE_NAME_PATTERN})


class ForgetAboutIn(_Body):
    # Exactly one of the two (the service refuses both or neither: 400). Not
    # nullable: an explicit null is a 422, as the schema says.
    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": ["subject"], "not": {"required": ["query"]}},
                {"required": ["query"], "not": {"required": ["subject"]}},
            ]
        }
    )

    subject: str = Field(
        default=None,  # type: ignore[assignment]
        min_length=2,
        max_length=1000,
        # Two characters that are not blank at either end: " a " is too short.
        pattern=r"^\S[\s\S]*\S$",
        description="Text to look for in every record, any case (e.g. a name, a phone number).",
    )
    query: str = Field(
        default=None,  # type: ignore[assignment]
        min_length=2,
        max_length=1000,
        json_schema_extra=NOT_BLANK,
        description="Words that must all appear in a record, in any order and case.",
    )
    # A dry run by default: the list comes first, the purge on a second call.
    dry_run: bool = True
