"""Recall and what feeds the consolidator: search and briefs."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from halls.http.deps import MemoryDep, StoreParam
from halls.http.schemas import BriefIn, SearchIn
from halls.models import Brief, Hit

router = APIRouter(tags=["recall"])


class SearchOut(BaseModel):
    results: list[Hit]


@router.post("/search", response_model=SearchOut)
def search(body: SearchIn, memory: MemoryDep, store: StoreParam = None) -> SearchOut:
    return SearchOut(results=memory.search(store=store, **body.model_dump()))


@router.post("/brief", status_code=201, response_model=Brief)
def brief(body: BriefIn, memory: MemoryDep, store: StoreParam = None) -> Brief:
    return memory.submit_brief(
        body.summary,
        store=store,
        promote_hints=body.promote_hints,
        completed_intents=body.completed_intents,
        noise=body.noise,
    )
