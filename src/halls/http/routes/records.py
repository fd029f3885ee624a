"""Texts of records by id, across tiers: what a consolidation run's inputs said."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from halls.http.deps import MemoryDep, ReadStore
from halls.service import MAX_TEXT_IDS, RecordTexts

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
        ),
    ],
) -> RecordTexts:
    """The text of each record; ids no longer stored (deleted, purged) under ``missing``."""
    return memory.record_texts(id, store=store)
