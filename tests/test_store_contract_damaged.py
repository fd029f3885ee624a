"""The Store contract, damaged records: every backend reads around what it cannot serve.

A record whose metadata no serializer can write back (a lone surrogate, or
nesting deeper than ``halls.storable.READ_DEPTH``), stored before writes were
checked, is skipped by lists, batch reads and the consolidation snapshot (its
vector with it), is ``DamagedRecord`` by id, and can still be deleted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from halls.errors import DamagedRecord
from halls.storable import READ_DEPTH
from halls.store import Store
from store_contract import axis, fact, journal, loop, opened, short, store

__all__ = ["opened", "store"]  # fixtures, imported for pytest

LONE = "\udfff"


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def test_damaged_records_are_skipped_by_every_read(store: Store) -> None:
    """Lists, get_records, journal and the consolidation snapshot skip them; vectors align."""
    good = short("the blue kettle", when=1)
    bad = short("the blue kettle, a surrogate", when=2, metadata={"k": LONE})
    deep = short("the blue kettle, deep", when=3, metadata=_nested(READ_DEPTH + 1))
    key = short("the blue kettle, a bad key", when=4, metadata={LONE: 1})
    store.add_short([good, bad, deep, key], np.stack([axis(0), axis(1), axis(2), axis(3)]))
    fine_loop, bad_loop = loop("descale the kettle"), loop("fix the kettle lid")
    bad_loop = bad_loop.model_copy(update={"metadata": {"k": [LONE]}})
    store.add_loop(fine_loop, axis(4))
    store.add_loop(bad_loop, axis(5))
    bad_fact = fact("the kettle is blue").model_copy(update={"metadata": {"k": LONE}})
    store.add_fact(bad_fact, axis(6))
    event = journal("the kettle whistled")
    bad_event = journal("the kettle broke").model_copy(update={"metadata": {"k": LONE}})
    store.add_journal([event, bad_event])

    assert [e.id for e in store.list_short(50, 0)] == [good.id]
    assert [lp.id for lp in store.list_loops(None, 50, 0)] == [fine_loop.id]
    assert store.list_facts(None, 50, 0) == []
    assert [e.id for e in store.list_journal(50, 0)] == [event.id]
    assert [e.id for e in store.journal_since(None)] == [event.id]
    wanted = [good.id, bad.id, deep.id, key.id, fine_loop.id, bad_loop.id, bad_fact.id]
    assert set(store.get_records(wanted)) == {good.id, fine_loop.id}

    entries, into, vectors = store.short_for_consolidation()
    assert [e.id for e in entries] == [good.id] and len(into) == 1
    assert vectors.shape[0] == 1 and np.allclose(vectors[0], axis(0))
    loops, loop_vectors = store.open_loops_with_vectors()
    assert [lp.id for lp in loops] == [fine_loop.id] and np.allclose(loop_vectors[0], axis(4))
    facts, fact_vectors = store.facts_with_vectors("active")
    assert facts == [] and fact_vectors.shape[0] == 0

    for read in (
        lambda: store.get_short(bad.id),
        lambda: store.get_short(deep.id),
        lambda: store.get_loop(bad_loop.id),
        lambda: store.get_fact(bad_fact.id),
    ):
        with pytest.raises(DamagedRecord) as info:
            read()
        assert "delete it" in info.value.message
    assert store.delete_short(bad.id) and store.delete_short(deep.id)
    assert store.delete_loop(bad_loop.id)
    assert store.get_short(good.id) == good
