"""Recall and what feeds the consolidator: search and briefs."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from halls.http.deps import MemoryDep, ReadStores, StoreParam, WriteStore, read_stores
from halls.http.schemas import BriefIn, SearchIn
from halls.models import Brief, Recall

router = APIRouter(tags=["recall"])


@router.post("/search", response_model=Recall)
def search(
    body: SearchIn,
    memory: MemoryDep,
    request: Request,
    checked: ReadStores,
    store: StoreParam = None,
) -> Response:
    """Ranked hits, and the open loops due for this query (when loops are searched).

    ``stores`` in the body searches several stores at once (instead of
    ``?store=``); the hits are merged into one list, each naming its store.
    """
    names = checked or read_stores(request, store, body.stores)
    found = memory.recall(stores=names, **body.model_dump(exclude={"stores"}))
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
