"""The Embedder protocol: text in, unit-length float32 vectors out.

A store records the fingerprint (name + dimension) of the embedder that
wrote its vectors; vectors of two models are not comparable, so opening a
store with another embedder is refused until ``halls reembed`` runs.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    @property
    def name(self) -> str:
        """A stable name for the model, part of the fingerprint."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 array of L2-normalised rows."""
        ...


def fingerprint(embedder: Embedder) -> str:
    return f"{embedder.name}:{embedder.dim}"


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
