"""Folded entries stay findable: issue 51, item 4, through a live server's HTTP API.

A consolidation folds the short-term entries a fact was made from into it
(``consolidated_into``); they stay in the search index until their TTL, and
recall ranks each below its fact when both are hits.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from clock_server import DAY
from conftest import BOTH
from test_consolidate_http import S, clock, facts, make_server, remember, run

__all__ = ["clock", "make_server"]  # the fixtures, shared

PNPM = "The team uses pnpm, not npm, in acme-web"
FLY = "acme-web deploys to Fly.io from the main branch"


def search(c: httpx.Client, query: str, **extra: Any) -> list[dict[str, Any]]:
    r = c.post("/search", params=S, json={"query": query, "n_results": 20, **extra})
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_folded_entries_stay_findable_below_their_fact(make_server, clock) -> None:
    c = make_server().client
    pnpm, fly = [], []
    for _ in range(4):
        pnpm.append(remember(c, PNPM))
        fly.append(remember(c, FLY))
        clock.advance(DAY)
    record = run(c)
    assert record["status"] == "done"
    made = facts(c)
    assert made, record
    folded = {e: f["id"] for f in made for e in f["derived_from"] if e in pnpm + fly}
    assert folded  # the run folded entries into a fact

    for query in ("where does acme-web deploy to?", "which package manager does acme-web use?"):
        for extra in ({}, {"tiers": ["short"]}):
            ids = [h["id"] for h in search(c, query, **extra)]
            # Every entry is still findable, folded or not.
            assert set(fly) <= set(ids) or set(pnpm) <= set(ids), (query, extra, ids)
    hits = search(c, "where does acme-web deploy to?")
    ids = [h["id"] for h in hits]
    assert set(fly) <= set(ids), ids
    assert set(fly) <= {h["id"] for h in search(c, "Fly.io deploys", tiers=["short"])}
    for h in hits:
        into = folded.get(h["id"])
        if into in ids:
            # A folded entry ranks after its fact, and says so.
            assert ids.index(into) < ids.index(h["id"])
            assert h["score_detail"]["folded_into"] == into
