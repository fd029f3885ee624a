"""An acknowledged write survives SIGKILL of the server right after the 2xx."""

from __future__ import annotations

import pytest

from http_helpers import counts, created, search


@pytest.mark.slow
def test_sigkill_after_acknowledged_writes_loses_nothing(server_factory, store_name) -> None:
    """Every write answered 2xx before a SIGKILL is stored and searchable after a restart."""
    first = server_factory()
    c = first.client()
    short: dict[str, str] = {}
    journal: list[str] = []
    loops: dict[str, str] = {}
    for round_ in range(4):
        for i in range(10):
            text = f"durable note {round_}-{i}: parcel locker code {1000 + 37 * (round_ * 10 + i)}"
            short[created(c, "/short", store_name, {"content": text})["id"]] = text
        items = [f"batched memory {round_}-{i} about the tide table at pier {i}" for i in range(50)]
        ids = created(c, "/short/batch", store_name,
                      {"items": [{"content": t} for t in items]})["ids"]  # fmt: skip
        short.update(zip(ids, items, strict=True))
        journal += created(
            c,
            "/journal/batch",
            store_name,
            {"items": [{"content": f"turn {round_}-{i}"} for i in range(5)]},
        )["ids"]
        loop = created(c, "/near", store_name, {"intent": f"open loop number {round_}"})
        loops[loop["id"]] = loop["intent"]
    last_text = "the very last write: the spare bike pump is in the hallway cupboard"
    last = created(c, "/short", store_name, {"content": last_text})
    short[last["id"]] = last_text
    first.kill()  # immediately after the last acknowledgement
    assert first.proc.returncode == -9

    second = server_factory(data_dir=first.data_dir)
    c = second.client()
    p = {"store": store_name}
    assert counts(c, store_name) == {"short": len(short), "near": len(loops),
                                     "long": 0, "journal": len(journal), "briefs": 0,
                                     "forget_flags": 0}  # fmt: skip
    listed = {e["id"]: e["content"] for e in c.get("/short", params={**p, "limit": 1000}).json()}
    assert listed == short
    assert {e["id"] for e in c.get("/journal", params={**p, "limit": 1000}).json()} == set(journal)
    for id_, intent in loops.items():
        assert c.get(f"/near/{id_}", params=p).json()["intent"] == intent
    assert search(c, store_name, query="where is the bicycle pump kept?")[0]["id"] == last["id"]
    sample = list(short.items())[::23]
    for id_, text in sample:
        hits = search(c, store_name, query=text, n_results=3, tiers=["short"])
        assert id_ in [h["id"] for h in hits], text
