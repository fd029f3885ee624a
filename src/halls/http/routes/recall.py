"""Recall and what feeds the consolidator: search and briefs."""

from __future__ import annotations

from fastapi import APIRouter, Response

from halls.http.deps import MemoryDep, ReadStore, WriteStore
from halls.http.schemas import BriefIn, SearchIn
from halls.models import Brief, Recall

router = APIRouter(tags=["recall"])


@router.post("/search", response_model=Recall)
def search(body: SearchIn, memory: MemoryDep, store: ReadStore) -> Response:
    """Ranked hits, and the open loops due for this query (when loops are searched)."""
    found = memory.recall(store=store, **body.model_dump())
    # Serialised here, in the worker thread, with the same pydantic
    # serializer: returned as a model, the hits would be validated again,
    # in a second hop to the thread pool, before the same serialisation.
    # response_model still documents the body.
    return Response(found.model_dump_json(), media_type="application/json")


@router.post("/brief", status_code=201, response_model=Brief)
def brief(body: BriefIn, memory: MemoryDep, store: WriteStore) -> Brief:
    return memory.submit_brief(
        body.summary,
        store=store,
        promote_hints=body.promote_hints,
        completed_intents=body.completed_intents,
        noise=body.noise,
    )
