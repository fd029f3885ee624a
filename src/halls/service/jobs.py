"""Consolidation runs as jobs: started now, run in a thread, watched as they go.

``Jobs.start`` answers at once with a job (``queued``); a thread runs the
consolidation and records its progress as the run reports it
(``halls.consolidate.progress``: the stage, and items done of its total),
then its run record (``done``) or its error (``failed``). One job at a
time per store: a second start while one is queued or running is refused
with a ``Conflict`` that names it.

Jobs live in this process's memory: a restart forgets them (the last
``KEEP`` finished ones are kept until then). The run itself is as durable
as any run: its record is in the store (``/consolidate/runs``) whether or
not anyone watches its job.
"""

from __future__ import annotations

import contextvars
import logging
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from halls.errors import Conflict, HallsError, InvalidInput, NotFound
from halls.models import Run, to_datetime

log = logging.getLogger("halls.consolidate")
KEEP = 100  # finished jobs remembered (their results), oldest forgotten first
JOB_ID = re.compile(r"^job_[0-9a-f]{32}$")
JobStatus = Literal["queued", "running", "done", "failed"]
Reporter = Callable[[str, int, int], None]


class JobError(BaseModel):
    code: str  # as in an HTTP error body (halls.errors)
    message: str


class Job(BaseModel):
    """A consolidation job as a client sees it."""

    id: str = Field(json_schema_extra={"pattern": JOB_ID.pattern})
    store: str
    dry_run: bool
    status: JobStatus
    stage: str | None = Field(None, description="What the run is doing now, e.g. judging.")
    done: int = Field(0, description="Items of the stage done so far.")
    total: int = Field(0, description="Items of the stage in all.")
    created_at: datetime
    finished_at: datetime | None = None
    elapsed_seconds: float = Field(description="Since the job was started (until it finished).")
    run: Run | None = Field(None, description="The run record, once done.")
    error: JobError | None = Field(None, description="Why it failed, once failed.")


class _State:
    """A job's mutable state, written by its thread and read by anyone (under ``lock``)."""

    def __init__(self, id: str, store: str, dry_run: bool, created: float) -> None:
        self.id, self.store, self.dry_run = id, store, dry_run
        self.status: JobStatus = "queued"
        self.stage: str | None = None
        self.done = self.total = 0
        self.created = created
        self.started = time.perf_counter()
        self.elapsed: float | None = None
        self.finished: float | None = None
        self.run: Run | None = None
        self.error: JobError | None = None
        self.thread: threading.Thread | None = None


class Jobs:
    """The consolidation jobs of one process."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, _State] = OrderedDict()

    def start(self, store: str, dry_run: bool, work: Callable[[Reporter], Run]) -> Job:
        """Start ``work(reporter)`` (a consolidation of ``store``) in a thread; the job."""
        with self._lock:
            for other in self._jobs.values():
                if other.store == store and other.status in ("queued", "running"):
                    raise Conflict(
                        f"consolidation job {other.id} is still {other.status} on store "
                        f"'{store}'; watch it at /consolidate/jobs/{other.id}"
                    )
            state = _State(f"job_{uuid.uuid4().hex}", store, dry_run, self._clock())
            self._jobs[state.id] = state
            self._forget_old()
            # The thread runs in a copy of the caller's context: the audit
            # log names who started the run (``acting_as``).
            context = contextvars.copy_context()
            state.thread = threading.Thread(
                target=context.run,
                args=(self._work, state, work),
                name=f"halls-job-{store}",
                daemon=True,
            )
            job = self._snapshot(state)
        state.thread.start()
        return job

    def get(self, id: str, store: str) -> Job:
        """The job ``id`` of ``store`` (another store's job is not found either)."""
        if not isinstance(id, str) or not JOB_ID.match(id):
            raise InvalidInput(f"'{str(id)[:80]}' is not a valid job id")
        with self._lock:
            state = self._jobs.get(id)
            if state is None or state.store != store:
                raise NotFound(f"no consolidation job {id} (jobs do not survive a restart)")
            return self._snapshot(state)

    def wait(self) -> None:
        """Let every running job finish (the service is closing its stores)."""
        with self._lock:
            threads = [s.thread for s in self._jobs.values() if s.thread is not None]
        for thread in threads:
            thread.join()

    def _work(self, state: _State, work: Callable[[Reporter], Run]) -> None:
        def reporter(stage: str, done: int, total: int) -> None:
            with self._lock:
                state.status, state.stage, state.done, state.total = "running", stage, done, total

        with self._lock:
            state.status = "running"
        try:
            run = work(reporter)
        except HallsError as exc:
            self._finish(state, None, JobError(code=exc.code, message=exc.message))
        except Exception:
            log.exception("consolidation job %s failed", state.id)
            error = JobError(code="internal", message="internal error; see the server log")
            self._finish(state, None, error)
        else:
            self._finish(state, run, None)

    def _finish(self, state: _State, run: Run | None, error: JobError | None) -> None:
        with self._lock:
            state.run, state.error = run, error
            state.status = "failed" if error is not None else "done"
            state.elapsed = time.perf_counter() - state.started
            state.finished = self._clock()

    def _forget_old(self) -> None:
        finished = [k for k, s in self._jobs.items() if s.status in ("done", "failed")]
        for key in finished[: max(0, len(finished) - KEEP)]:
            del self._jobs[key]

    @staticmethod
    def _snapshot(s: _State) -> Job:
        return Job(
            id=s.id,
            store=s.store,
            dry_run=s.dry_run,
            status=s.status,
            stage=s.stage,
            done=s.done,
            total=s.total,
            created_at=to_datetime(s.created),
            finished_at=to_datetime(s.finished) if s.finished is not None else None,
            elapsed_seconds=round(
                s.elapsed if s.elapsed is not None else time.perf_counter() - s.started, 3
            ),
            run=s.run,
            error=s.error,
        )
