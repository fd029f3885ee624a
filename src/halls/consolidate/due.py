"""When a store is next due for consolidation, kept in the store itself.

The next due time is a meta key of the store (``consolidator.next_due``), so a
restart does not reset the clock: a server that was down when a store fell due
runs it at its first check. A store seen for the first time is due one
interval later, not at once. Every applied run (on a timer or on request) sets
the next due time to ``finished + interval_seconds``.
"""

from __future__ import annotations

from halls.store.base import Store

NEXT_DUE = "consolidator.next_due"


def next_due(store: Store, now: float, interval: float) -> float:
    """The store's next due time, set to ``now + interval`` when it has none."""
    value = store.get_meta(NEXT_DUE)
    if value is None:
        due = now + interval
        store.set_meta(NEXT_DUE, repr(due))
        return due
    return float(value)


def set_next_due(store: Store, when: float) -> None:
    store.set_meta(NEXT_DUE, repr(when))
