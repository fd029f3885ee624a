"""The quickest end-to-end proof: remember over HTTP, then recall it."""

from __future__ import annotations


def test_remember_then_recall_over_http(server, store_name) -> None:
    """A memory written through the live API is found by a paraphrase."""
    c = server.client()
    r = c.post(
        "/short", params={"store": store_name}, json={"content": "Chad prefers absolute paths"}
    )
    assert r.status_code == 201, r.text
    r = c.post("/search", params={"store": store_name}, json={"query": "how does Chad like paths?"})
    assert r.status_code == 200
    assert r.json()["results"][0]["content"] == "Chad prefers absolute paths"
