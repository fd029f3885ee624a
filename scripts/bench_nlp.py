"""What the English parse (halls.nlp) costs: load time, memory added, sentences a second.

    python scripts/bench_nlp.py ../shared/bench/locomo_dev.json [--no-torch]

The sentences are LoCoMo's chat turns cut as the consolidator cuts them
(``segment.sentences``), the first 5,000. Memory is the resident set added
by importing spaCy and loading the model in a process that already holds
the server's modules; ``--no-torch`` hides torch from it, as on an install
without the ``torch`` extra (spaCy's thinc imports torch when it is there).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def _rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    if "--no-torch" in sys.argv:
        sys.modules["torch"] = None  # type: ignore[assignment]
    import halls.consolidate.runner  # noqa: F401 - the server's modules, loaded first
    import halls.http  # noqa: F401
    from halls.consolidate.segment import sentences

    path = next(a for a in sys.argv[1:] if not a.startswith("--"))
    texts: list[str] = []
    for conversation in json.loads(Path(path).read_text()):
        for key, turns in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    texts += sentences(turn.get("text", ""))
    texts = texts[:5000]
    before = _rss_mb()
    start = time.perf_counter()
    from halls import nlp

    pipeline = nlp.pipeline()
    loaded = time.perf_counter() - start
    grown = _rss_mb() - before
    start = time.perf_counter()
    n = sum(1 for _ in pipeline.pipe(texts, batch_size=256))
    seconds = time.perf_counter() - start
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"{n} sentences, {words:.1f} words each")
    after = _rss_mb() - before
    print(f"load {loaded:.1f} s, memory added {grown:.0f} MB (after parsing {after:.0f})")
    print(f"parse {n / seconds:.0f} sentences/s ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
