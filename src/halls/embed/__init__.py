"""Embedders: the protocol, the packaged local model, an OpenAI-compatible endpoint."""

from __future__ import annotations

from halls.config import EmbedderSettings
from halls.embed.base import Embedder, fingerprint
from halls.errors import EmbeddingFailed, InvalidInput


def build_embedder(settings: EmbedderSettings) -> Embedder:
    """Composition helper: the embedder that the settings describe."""
    if settings.kind == "openai":
        if not settings.base_url:
            raise InvalidInput("embedder.base_url is required when embedder.kind is 'openai'")
        from halls.embed.openai import OpenAIEmbedder

        key = settings.api_key.get_secret_value() if settings.api_key else None
        return OpenAIEmbedder(
            settings.base_url,
            settings.model,
            api_key=key,
            batch_size=settings.batch_size,
            timeout=settings.timeout_seconds,
        )
    if settings.backend == "onnx":
        from halls.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(settings.model, threads=settings.threads)
    try:
        import sentence_transformers  # noqa: F401 - only to tell a missing extra apart
        import torch  # noqa: F401
    except ImportError as exc:
        raise EmbeddingFailed(
            "embedder.backend 'torch' needs the torch extra: "
            "pip install torch==2.13.0 'halls[torch]'"
        ) from exc
    from halls.embed.local import LocalEmbedder

    return LocalEmbedder(
        settings.model,
        batch_size=settings.batch_size,
        precision=settings.precision,
        threads=settings.threads,
    )


__all__ = ["Embedder", "build_embedder", "fingerprint"]
