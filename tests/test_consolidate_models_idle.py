"""The models a run loads are let go when no run starts for a while
(``consolidator.models_idle_seconds``, ``halls.consolidate.caches``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from halls import Memory, Settings, nlp
from halls.consolidate.judge import cross
from halls.models import NewShort


def _loaded() -> bool:
    return nlp.pipeline.cache_info().currsize > 0 or cross.default_reader.cache_info().currsize > 0


def _wait(until: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if until():
            return True
        time.sleep(0.05)
    return until()


def _store(tmp_path: Path, embedder: Any, idle: float | None) -> Memory:
    consolidator = {"mode": "external", "models_idle_seconds": idle}
    memory = Memory(Settings(data_dir=tmp_path, consolidator=consolidator), embedder=embedder)
    memory.remember_many(
        [NewShort(content="The user prefers tabs over spaces.", pinned=True)], store="s"
    )
    return memory


def test_the_models_go_when_no_run_starts_for_a_while(tmp_path: Path, embedder: Any) -> None:
    with _store(tmp_path, embedder, idle=0.3) as memory:
        memory.consolidate(store="s")
        assert _loaded()  # the run parsed its fact and read pairs: the models are in
        assert _wait(lambda: not _loaded()), "the models were still loaded after the idle time"
        # The next run loads them again and makes the same kind of fact.
        memory.remember_many(
            [NewShort(content="The user's dog Biscuit is a beagle.", pinned=True)], store="s"
        )
        run = memory.consolidate(store="s")
        assert [a.kind for a in run.actions] == ["promote"], run.actions


def test_null_keeps_them(tmp_path: Path, embedder: Any) -> None:
    with _store(tmp_path, embedder, idle=None) as memory:
        memory.consolidate(store="s")
        assert _loaded()
        assert not _wait(lambda: not _loaded(), seconds=1.0)
