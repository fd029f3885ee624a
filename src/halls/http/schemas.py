"""Wire schemas: the exact request bodies of the HTTP API.

Responses are the domain models themselves (``halls.models``), so every
interface serialises a record the same way.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from halls.models import MAX_CONTENT_CHARS, Retriever

Content = Field(min_length=1, max_length=MAX_CONTENT_CHARS)


def _not_bool(value: Any) -> Any:
    # Lax float parsing would turn JSON true into 1.0, i.e. a time in 1970.
    if isinstance(value, bool):
        raise ValueError("must be ISO-8601 or unix seconds")
    return value


Time = Annotated[float | str | None, BeforeValidator(_not_bool)]


class _Body(BaseModel):
    # An unknown field is most often a typo ("contnet"): refuse it loudly.
    model_config = ConfigDict(extra="forbid")


class ShortIn(_Body):
    content: str = Content
    topic: str | None = Field(default=None, max_length=200)
    source: str | None = Field(default=None, max_length=200)
    pinned: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: Time = None


class ShortPatch(_Body):
    """The fields to change; those left out stay as they are."""

    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    topic: str | None = Field(default=None, max_length=200)
    pinned: bool | None = None
    metadata: dict[str, Any] | None = None


class ShortBatchIn(_Body):
    items: list[ShortIn] = Field(min_length=1, max_length=1000)


class IdsOut(BaseModel):
    ids: list[str]


class NearIn(_Body):
    intent: str = Content
    topic: str | None = Field(default=None, max_length=200)
    trigger_type: str = "manual"
    trigger_value: str | None = Field(default=None, max_length=1000)
    expires_at: Time = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class JournalIn(_Body):
    content: str = Content
    role: str | None = Field(default=None, max_length=100)
    session_id: str | None = Field(default=None, max_length=200)
    occurred_at: Time = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class JournalBatchIn(_Body):
    items: list[JournalIn] = Field(min_length=1, max_length=1000)


class ForgetIn(_Body):
    reason: str = Field(min_length=1, max_length=2000)


class BriefIn(_Body):
    summary: str = Content
    promote_hints: list[str] = Field(default_factory=list, max_length=1000)
    completed_intents: list[str] = Field(default_factory=list, max_length=1000)
    # Texts or topics the consolidator must never promote (small talk, scratch work).
    noise: list[str] = Field(default_factory=list, max_length=1000)


class SearchIn(_Body):
    query: str = Content
    n_results: int = Field(default=5, ge=1, le=100)
    tiers: list[str] | None = None
    topic: str | None = None
    since: Time = None
    until: Time = None
    include_superseded: bool = False
    retriever: Retriever = "full"
    # False for an inspection or an evaluation: the hits do not count as recalled.
    reinforce: bool = True
    # Only long-term facts of this category.
    category: str | None = None


class StoreIn(_Body):
    name: str
