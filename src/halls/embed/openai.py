"""An OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

Works with llama.cpp, ollama, vLLM, LM Studio or a remote API. The
dimension is learned from the first answer, so the fingerprint is exact.
"""

from __future__ import annotations

import httpx
import numpy as np

from halls.embed.base import normalise
from halls.errors import EmbeddingFailed


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self._model = model
        self._batch_size = batch_size
        self._dim: int | None = None

    @property
    def name(self) -> str:
        return f"openai/{self._model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._call(texts[start : start + self._batch_size]))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = normalise(np.asarray(rows, dtype=np.float32))
        self._dim = vectors.shape[1]
        return vectors

    def _call(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post("/embeddings", json={"model": self._model, "input": batch})
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in data]
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingFailed(f"the embeddings endpoint failed ({type(exc).__name__})") from exc
        if len(vectors) != len(batch):
            raise EmbeddingFailed("the embeddings endpoint returned the wrong number of vectors")
        return vectors
