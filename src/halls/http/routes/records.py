"""Texts of records by id, across tiers: what a consolidation run's inputs said."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from halls.http.deps import MemoryDep, ReadStore
from halls.models import ID_PREFIX
from halls.service import MAX_TEXT_IDS, RecordTexts

# Short, near, long, journal and brief ids (as ``models.id_pattern``; no flag ids).
_PREFIXES = "".join(ID_PREFIX[k] for k in ("short", "near", "long", "journal", "brief"))
RECORD_ID_PATTERN = rf"^[{_PREFIXES}]_[0-9A-HJKMNP-TV-Z]{{26}}$"

router = APIRouter(tags=["system"])


@router.get("/records", response_model=RecordTexts)
def record_texts(
    memory: MemoryDep,
    store: ReadStore,
    id: Annotated[
        list[str],
        Query(
            min_length=1,
            max_length=MAX_TEXT_IDS,
            description="A record id of any tier (short, near, long, journal, brief); repeat it.",
            # Documented for clients and fuzzers; the service refuses a malformed one (400).
            json_schema_extra={"items": {"type": "string", "pattern": RECORD_ID_PATTERN}},
        ),
    ],
) -> RecordTexts:
    """The text of each record; ids no longer stored (deleted, purged) under ``missing``."""
    return memory.record_texts(id, store=store)
