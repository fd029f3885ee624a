"""Embedding clusters (pure): which short-term entries say the same thing.

Star clustering over the similarity graph: the entry with the most
neighbours above the threshold (on ties, the most that ``joins`` accepts)
seeds a cluster and takes its unassigned neighbours, nearest first, then the
next densest, and so on. Every member is
within the threshold of its seed *and of every other member*, and no pair of
members is read apart by ``joins`` (complete linkage: no chaining from topic
to topic, and no cluster of statements that are each a little like the seed
but unlike one another — long chatty turns about one person otherwise
gather into one "fact", "Priya's sister" and "Priya's brother" into one
person), and the seed is a
natural representative. ``joins(seed, others)`` says which of a
seed's unassigned neighbours may join it, in one batch per seed: the runner
asks the pair judge (``judge``), which refuses a neighbour that would
*change* the seed's content ("now prefers tildes" is close to "prefers
absolute paths" but is no paraphrase of it) and accepts a paraphrase below
the similarity of most paraphrases ("Markdown rather than Word is what Jonas
uses for notes").

Similarities are computed block by block, so 10,000 entries never need the
whole 10,000 x 10,000 matrix in memory at once. Only a row's ``cap``
nearest neighbours are judged: the judge's cost grows with the pairs it
reads, and a statement repeated hundreds of times still forms its cluster
over the next seeds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from halls.consolidate import progress

JOIN, APART = 1, -1  # answers of ``joins`` beside 0 (neither)
# ... and: the two read as the same, but not surely enough to link them; they
# may share a cluster that links each of them to its seed.
ALIKE = 2
BLOCK = 1024
CAP = 48  # neighbours a seed offers ``joins`` (nearest first)


def pair_cosines(vectors: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of each pair of rows (``a[i]``, ``b[i]``) of unit ``vectors``, a block
    of pairs at a time: gathered at once, the pairs' vectors of a 10,000-entry run
    were two copies of 296,000 x 384 floats (910 MB) for one float a pair."""
    out = np.empty(len(a), dtype=vectors.dtype)
    step = BLOCK * 32
    for s in range(0, len(a), step):
        out[s : s + step] = np.einsum(
            "ij,ij->i", vectors[a[s : s + step]], vectors[b[s : s + step]]
        )
    return out


def neighbours(
    vectors: np.ndarray, threshold: float, dense: float | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """For each row, the rows with cosine >= threshold (itself included), nearest
    first; and how many rows are at cosine >= ``dense`` (default: ``threshold``)."""
    out: list[np.ndarray] = []
    count: list[int] = []
    for start in range(0, len(vectors), BLOCK):
        sims = vectors[start : start + BLOCK] @ vectors.T
        for k, row in enumerate(sims):
            if k % 256 == 0:  # a block of rows takes a second on a busy machine
                progress.report("clustering", start + k, len(vectors))
            near = np.flatnonzero(row >= threshold)
            out.append(near[np.argsort(-row[near], kind="stable")])
            count.append(len(near) if dense is None else int((row[near] >= dense).sum()))
    return out, np.array(count, dtype=np.int64)


def cluster(
    vectors: np.ndarray,
    threshold: float,
    joins: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    cap: int = CAP,
    reach: float | None = None,
) -> list[list[int]]:
    """Clusters as lists of row indices, seed first; every row is in exactly one.

    ``joins(a, b)`` answers, for arrays of row pairs (a < b), whether the two
    may share a cluster: ``JOIN`` (or True) yes, ``APART`` the two are read as
    different things (then no cluster holds both, even through a seed),
    ``ALIKE`` as the same but not surely (not as its seed's neighbour, but
    below the threshold as a fellow member: "Drinks coffee without milk or
    sugar" and "Black coffee is how Ines likes it", at 0.48, both joined to
    "Ines takes her coffee black, no sugar"), 0 (or False) not as its
    seed's neighbour. It is asked once, in one batch, about every pair
    of a row and its ``cap`` nearest neighbours (it must not depend on
    which of the two is the seed).

    ``reach`` (below ``threshold``) offers ``joins`` the pairs down to it too:
    such a pair shares a cluster only when ``joins`` accepts it, seed and
    member alike ("User is vegetarian" / "I don't eat meat, strictly veg"
    sit at 0.55). Which rows seed first is still counted at ``threshold``.
    """
    n = len(vectors)
    if n == 0:
        return []
    low = threshold if reach is None or joins is None else min(reach, threshold)
    near, degree = neighbours(vectors, low, threshold if low < threshold else None)
    apart = np.zeros(0, dtype=np.int64)  # keys (a * n + b, a < b) of pairs read APART
    linked = np.zeros(0, dtype=np.int64)  # ... and of pairs read JOIN or ALIKE
    if joins is not None:
        near = [row[row != i][:cap] for i, row in enumerate(near)]
        # (Without a reach every JOIN is at the threshold or above, so a
        # member below it is never accepted: complete linkage as before.)
        near, apart, linked = _judged(near, n, joins)
    else:
        near = [row[row != i] for i, row in enumerate(near)]
    # Densest first; among equally dense, the one with the most neighbours
    # that may join (a statement the judge reads as the same as two others
    # seeds them both, not one of the two it does not read as the same);
    # then input order (the caller sorts oldest first).
    joined = np.array([len(x) for x in near])
    order = np.lexsort((-joined, -degree))
    taken = np.zeros(n, dtype=bool)
    clusters: list[list[int]] = []
    for seed in order.tolist():
        if taken[seed]:
            continue
        taken[seed] = True
        members = [seed]
        for j in near[seed].tolist():
            # Complete linkage: a member must also be near every member
            # before it (two "same as the seed" readings far apart are two
            # statements, not one), and not be read apart from any of them
            # ("Priya's brother" beside "Priya's sister", both like a seed).
            if taken[j]:
                continue
            # Below the threshold, only a pair the judge read as the same.
            far = [
                m
                for m, c in zip(members, vectors[members] @ vectors[j], strict=True)
                if c < threshold
            ]
            if far and not _all_of(linked, far, j, n):
                continue
            if apart.size and _any_of(apart, members, j, n):
                continue
            taken[j] = True
            members.append(j)
        clusters.append(members)
    return clusters


def _judged(
    near: list[np.ndarray], n: int, joins: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Each row's neighbours that ``joins`` accepts, every pair asked once; and the
    sorted keys (a * n + b, a < b) of the pairs it read ``APART``, and ``JOIN`` or
    ``ALIKE``."""
    rows = np.concatenate([np.full(len(x), i, dtype=np.int64) for i, x in enumerate(near)])
    cols = np.concatenate(near).astype(np.int64) if rows.size else rows
    if not rows.size:
        return near, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    key = np.minimum(rows, cols) * n + np.maximum(rows, cols)
    pairs, back = np.unique(key, return_inverse=True)
    answer = np.asarray(joins(pairs // n, pairs % n)).astype(np.int8)
    ok = (answer == JOIN)[back.reshape(-1)]
    out: list[np.ndarray] = []
    start = 0
    for x in near:
        out.append(x[ok[start : start + len(x)]])
        start += len(x)
    return out, pairs[answer == APART], pairs[(answer == JOIN) | (answer == ALIKE)]


def _found(keys_sorted: np.ndarray, members: list[int], j: int, n: int) -> np.ndarray:
    """Per member, whether its pair with ``j`` is among ``keys_sorted``."""
    if not keys_sorted.size:
        return np.zeros(len(members), dtype=bool)
    m = np.asarray(members, dtype=np.int64)
    keys = np.minimum(m, j) * n + np.maximum(m, j)
    at = np.minimum(np.searchsorted(keys_sorted, keys), len(keys_sorted) - 1)
    return keys_sorted[at] == keys


def _any_of(keys_sorted: np.ndarray, members: list[int], j: int, n: int) -> bool:
    """Whether a pair of ``j`` and one of ``members`` is among ``keys_sorted``."""
    return bool(_found(keys_sorted, members, j, n).any())


def _all_of(keys_sorted: np.ndarray, members: list[int], j: int, n: int) -> bool:
    """Whether every pair of ``j`` and one of ``members`` is among ``keys_sorted``."""
    return bool(_found(keys_sorted, members, j, n).all())


def medoid(vectors: np.ndarray, members: list[int], among: list[int] | None = None) -> int:
    """The member closest on average to the others (the first on ties); one of
    ``among`` (a subset of ``members``) when given."""
    pool = members if among is None else among
    if len(members) <= 2:
        return pool[0]
    sub = vectors[members]
    return pool[int(np.argmax((vectors[pool] @ sub.T).sum(axis=1)))]
