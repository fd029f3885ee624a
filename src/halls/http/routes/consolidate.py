"""The consolidator over HTTP: run (or preview) it, review runs, revert one.

``POST /consolidate/run`` answers 201 with the run record (200 for a dry
run, which creates nothing), 409 while another run holds the store, and
503 when the run aborted (e.g. the LLM endpoint is down; nothing changed).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, RunId, WriteStore
from halls.http.schemas import _Body
from halls.models import Run

router = APIRouter(prefix="/consolidate", tags=["consolidate"])


class RunIn(_Body):
    dry_run: bool = False


class RunsOut(BaseModel):
    runs: list[Run]


@router.post(
    "/run",
    status_code=201,
    response_model=Run,
    responses={200: {"model": Run, "description": "A dry run: the plan; nothing changed"}},
)
def run(memory: MemoryDep, store: WriteStore, response: Response, body: RunIn | None = None) -> Run:
    dry = body is not None and body.dry_run
    if dry:
        response.status_code = 200
    return memory.consolidate(store=store, dry_run=dry)


@router.get("/runs", response_model=RunsOut)
def list_runs(
    memory: MemoryDep, store: ReadStore, limit: Limit = 50, offset: Offset = 0
) -> RunsOut:
    return RunsOut(runs=memory.list_runs(store=store, limit=limit, offset=offset))


@router.get("/runs/{id}", response_model=Run)
def get_run(id: RunId, memory: MemoryDep, store: ReadStore) -> Run:
    return memory.get_run(id, store=store)


@router.post("/runs/{id}/revert", response_model=Run)
def revert_run(id: RunId, memory: MemoryDep, store: WriteStore) -> Run:
    return memory.revert_run(id, store=store)


@router.get("/status")
def status(memory: MemoryDep, store: ReadStore) -> dict[str, Any]:
    return memory.consolidation_status(store=store)
